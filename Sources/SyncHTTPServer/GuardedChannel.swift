public import HummingbirdCore
public import Logging
public import NIOCore
import NIOHTTP1

/// A server's child channel with ``ConnectionLimits``' time limits: adds the
/// ``ConnectionDeadlineHandler`` to the pipeline (after TLS, when `base` is
/// wrapped in it), then sets `base` up and lets it handle the connection. A
/// request the HTTP decoder cannot read is answered 431 (a head over the
/// limit) or 400 (not HTTP) and the connection closed.
///
/// ``HTTPSyncServer/serverBuilder(_:)`` makes one for every connection; the
/// HTTP handlers of `base` must include a ``RequestProgressObserver``, which
/// ``HTTPSyncServer/http1Configuration(adding:)`` does.
public struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    /// What `base` hands its handler.
    public typealias Value = Base.Value

    /// The channel set up after the deadline handler.
    public let base: Base
    /// The time limits.
    public let limits: ConnectionLimits
    /// Whether a TLS handshake comes before the first request.
    public let awaitsTLSHandshake: Bool

    /// Guards `base` with `limits`.
    public init(_ base: Base, limits: ConnectionLimits, awaitsTLSHandshake: Bool) {
        self.base = base
        self.limits = limits
        self.awaitsTLSHandshake = awaitsTLSHandshake
    }

    /// Adds the deadline handler, then sets `base` up.
    public func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionDeadlineHandler(limits: limits, awaitsTLSHandshake: awaitsTLSHandshake, logger: logger))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(
                MalformedRequestAnswerer(headerLimit: HTTP1Channel.Configuration().httpDecoder.maxHeaderListSize),
                position: .after(decoder))
            return value
        }
    }

    /// Lets `base` handle the connection, on the event loop of its channel (``EventLoopTaskExecutor``).
    public func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await base.handle(value: value, logger: logger)
        }
    }
}
