import Foundation
#if canImport(Glibc)
import Glibc
#endif

#if canImport(Darwin)
private let socketBind = Darwin.bind
#else
private let socketBind = Glibc.bind
#endif

/// TCP sockets and ports on 127.0.0.1 for tests: a port no server answers on, and a port a server
/// can be started on again after it stops.
public enum LoopbackSocket {
    /// What binding failed on.
    public struct Failure: Error, CustomStringConvertible {
        /// The system call and its error.
        public let description: String
    }

    /// Binds a new socket to a free loopback port. A socket that listens queues connections nobody
    /// answers; one that does not listen has every connection refused. While the socket is open, no
    /// other socket can take the port.
    /// - Returns: The socket's descriptor (close it when done) and its port.
    public static func bind(listening: Bool) throws -> (descriptor: Int32, port: Int) {
        try bind(port: 0, listening: listening)
    }

    /// A free loopback port below the system's ephemeral range, for a server a test stops and starts
    /// again on the same port.
    ///
    /// A port the system picked (port 0) lies in the ephemeral range, from which the system also gives
    /// every outgoing connection its local port: between a server's stop and its restart, another
    /// test's connection may take the port, and the restart fails with "Address already in use". A
    /// port below that range is never given to an outgoing connection.
    public static func restartablePort() throws -> Int {
        let ephemeralStart = ephemeralRange()?.lowerBound ?? 32768
        let candidates = 10000..<max(ephemeralStart, 10001)
        var lastFailure: (any Error)?
        for _ in 0..<100 {
            do {
                let (descriptor, port) = try bind(port: Int.random(in: candidates), listening: false)
                close(descriptor)
                return port
            } catch {
                lastFailure = error
            }
        }
        throw lastFailure ?? Failure(description: "no free loopback port below \(ephemeralStart)")
    }

    /// Runs `start` (a server's start on a port) until it does not fail with "Address already in use",
    /// for up to 10 seconds, and returns what it started.
    ///
    /// A server started again on the port of one just stopped can find it taken while the old
    /// listening socket is still closing, and a port found free can be taken by another server before
    /// this one binds it. `start` picks the port on each attempt: the same one for a restart, a new one
    /// from ``restartablePort()`` for a first start.
    public static func retryingWhilePortTaken<Started>(
        _ start: () async throws -> Started
    ) async throws -> Started {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while true {
            do {
                return try await start()
            } catch where ContinuousClock.now < deadline && "\(error)".contains("Address already in use") {
                await Task.yield()
            }
        }
    }

    /// The system's ephemeral port range, where the system says it (Linux).
    private static func ephemeralRange() -> ClosedRange<Int>? {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8) else { return nil }
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1] else { return nil }
        return bounds[0]...bounds[1]
    }

    /// Binds a new socket to `port` on 127.0.0.1 (0: a free port the system picks).
    private static func bind(port: Int, listening: Bool) throws -> (descriptor: Int32, port: Int) {
        #if canImport(Darwin)
        let stream = SOCK_STREAM
        #else
        let stream = Int32(SOCK_STREAM.rawValue)
        #endif
        let descriptor = socket(AF_INET, stream, 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                socketBind(descriptor, generic, length) == 0 && (!listening || listen(descriptor, 16) == 0)
                    && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot bind loopback port \(port): \(reason)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Opens `count` connections to `port` on 127.0.0.1 without waiting for any of them (non-blocking
    /// connects: a server that does not accept leaves them in its backlog or unanswered), as a flood of
    /// clients would. Close them with ``closeAll(_:)``.
    /// - Returns: The sockets' descriptors.
    public static func flood(port: Int, count: Int) throws -> [Int32] {
        #if canImport(Darwin)
        let stream = SOCK_STREAM
        #else
        let stream = Int32(SOCK_STREAM.rawValue)
        #endif
        var descriptors: [Int32] = []
        for _ in 0..<count {
            let descriptor = socket(AF_INET, stream, 0)
            guard descriptor >= 0 else {
                closeAll(descriptors)
                throw Failure(description: "socket: \(String(cString: strerror(errno)))")
            }
            descriptors.append(descriptor)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 || errno == EINPROGRESS || errno == EAGAIN else {
                let reason = String(cString: strerror(errno))
                closeAll(descriptors)
                throw Failure(description: "connect to loopback port \(port): \(reason)")
            }
        }
        return descriptors
    }

    /// Closes the sockets of ``flood(port:count:)``.
    public static func closeAll(_ descriptors: [Int32]) {
        for descriptor in descriptors { close(descriptor) }
    }
}
