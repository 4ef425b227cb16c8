import Foundation
#if canImport(Glibc)
import Glibc
#endif

#if canImport(Darwin)
private let socketBind = Darwin.bind
#else
private let socketBind = Glibc.bind
#endif

/// A TCP socket bound to a free port on 127.0.0.1, for tests that need a port no server answers on:
/// while the socket is open, no other socket can take the port.
public enum LoopbackSocket {
    /// What binding failed on.
    public struct Failure: Error, CustomStringConvertible {
        /// The system call and its error.
        public let description: String
    }

    /// Binds a new socket to a free loopback port. A socket that listens queues connections nobody
    /// answers; one that does not listen has every connection refused.
    /// - Returns: The socket's descriptor (close it when done) and its port.
    public static func bind(listening: Bool) throws -> (descriptor: Int32, port: Int) {
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
            throw Failure(description: "cannot bind a loopback port: \(reason)")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
