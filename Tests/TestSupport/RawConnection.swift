import NIOCore
import NIOPosix
import Synchronization

/// A plain TCP connection for tests that speak to a server byte by byte: half a request head, a
/// trickled body, a connection that says nothing. Non-blocking (SwiftNIO), so tests can keep many
/// open beside each other.
///
/// ```swift
/// let connection = try await RawConnection.open(port: port)
/// try await connection.send("GET /health HTTP/1.1\r\nHost: x\r\n")
/// let ending = try await connection.readUntilClosed(within: .seconds(10))
/// #expect(ending.closed && ending.text.hasPrefix("HTTP/1.1 408"))
/// ```
public final class RawConnection: Sendable {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private let state = Mutex(State())

    private struct State {
        var received: [UInt8] = []
        var closed = false
        var waiters: [UInt64: (condition: @Sendable (String, Bool) -> Bool, continuation: CheckedContinuation<Void, Never>)] = [:]
        var nextWaiter: UInt64 = 0
        /// Waits that ended (by their limit) before their waiter registered.
        var abandoned: Set<UInt64> = []

        /// Takes out the waiters whose condition now holds.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let text = String(decoding: received, as: UTF8.self)
            let ready = waiters.filter { $0.value.condition(text, closed) }
            for id in ready.keys { waiters[id] = nil }
            return ready.map(\.value.continuation)
        }
    }

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
    }

    /// Connects to `host:port`, and sends `first` the moment the connection is made (in the same turn
    /// of the event loop, so that a server's time limit cannot run out between the two however loaded
    /// the machine is).
    public static func open(host: String = "127.0.0.1", port: Int, sending first: String = "") async throws -> RawConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if !first.isEmpty { try channel.pipeline.syncOperations.addHandler(SendOnConnect(Array(first.utf8))) }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let connection = RawConnection(channel: channel)
        Task { await connection.readAll() }
        return connection
    }

    /// Collects what arrives until the connection closes, waking the waiters as their conditions come true.
    private func readAll() async {
        do {
            try await channel.executeThenClose { inbound, _ in
                for try await buffer in inbound {
                    let ready = state.withLock {
                        $0.received.append(contentsOf: buffer.readableBytesView)
                        return $0.satisfiedWaiters()
                    }
                    for waiter in ready { waiter.resume() }
                }
            }
        } catch {}
        let ready = state.withLock {
            $0.closed = true
            return $0.satisfiedWaiters()
        }
        for waiter in ready { waiter.resume() }
    }

    /// Sends `text`'s UTF-8 bytes.
    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends `bytes`.
    public func send(_ bytes: [UInt8]) async throws {
        try await channel.channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// What arrived until the server closed the connection, or until a limit passed.
    public struct Ending: Sendable {
        /// The bytes that arrived, as text.
        public var text: String
        /// Whether the server closed the connection within the limit.
        public var closed: Bool
        /// How long the wait took.
        public var elapsed: Duration
    }

    /// Waits until the server closes the connection or `limit` passes, whichever comes first.
    public func readUntilClosed(within limit: Duration) async -> Ending {
        await wait(within: limit) { _, closed in closed }
    }

    /// Waits until `text` has arrived, the connection closed, or `limit` passed.
    public func read(until text: String, within limit: Duration) async -> Ending {
        await wait(within: limit) { received, closed in closed || received.contains(text) }
    }

    private func wait(within limit: Duration, until condition: @escaping @Sendable (String, Bool) -> Bool) async -> Ending {
        let start = ContinuousClock.now
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = self.state.withLock { state -> Bool in
                        if state.abandoned.remove(id) != nil { return true }
                        if condition(String(decoding: state.received, as: UTF8.self), state.closed) { return true }
                        state.waiters[id] = (condition, continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
            // Past the limit, the waiter is still registered: wake it, so the group can end.
            let waiter = state.withLock { state in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.abandoned.insert(id)
                    return nil as CheckedContinuation<Void, Never>?
                }
                return waiter.continuation
            }
            waiter?.resume()
        }
        let (text, closed) = state.withLock { (String(decoding: $0.received, as: UTF8.self), $0.closed) }
        return Ending(text: text, closed: closed, elapsed: start.duration(to: .now))
    }

    /// Closes the connection from this side.
    public func close() async {
        try? await channel.channel.close()
    }
}

/// Writes its bytes as soon as the connection is made.
private final class SendOnConnect: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
        context.fireChannelActive()
    }
}
