public import NIOCore

/// How many connections a server keeps open, and how long it waits for each
/// part of a request, so that slow, idle or flooding clients cannot hold it.
///
/// - **Open connections** (``maxOpenConnections``): plain HTTP, WebSocket push
///   streams and TLS handshakes in progress all count. At the cap the server
///   stops accepting: further connections wait in the kernel's backlog (or are
///   refused by it when that is full) until a connection closes; the
///   connections already open are served as before.
/// - **Request head** (``headerTimeout``): from the moment a connection is
///   ready (its TLS handshake done), or from the first byte of a later request
///   on a kept-alive connection, until the whole head has arrived. A head
///   that started and did not finish is answered `408` and the connection closed.
/// - **Body** (``bodyTimeout`` and ``bodyMinimumRate``), as Apache's
///   `mod_reqtimeout` does it: a body may take ``bodyTimeout``, plus one
///   second for every ``bodyMinimumRate`` bytes that have arrived; past that
///   the request is answered `408` (if no answer started) and the connection closed.
/// - **TLS handshake** (``tlsHandshakeTimeout``): from the connection's accept.
/// - **Idle keep-alive** (``keepAliveTimeout``): after an answer, until the
///   first byte of the next request.
///
/// The service of a request, once its body has arrived, is bounded by the
/// server's request timeout instead (``HTTPSyncServer/Configuration/requestTimeout``).
/// A connection upgraded to a WebSocket leaves these limits: the WebSocket's
/// pings decide whether it is alive (see ``connectionUpgraded(_:)``).
///
/// ```swift
/// var limits = ConnectionLimits.standard
/// limits.headerTimeout = .seconds(10)
/// let configuration = HTTPSyncServer.Configuration(port: 8443, connections: limits)
/// ```
public struct ConnectionLimits: Sendable, Hashable {
    /// The most connections open at once; `nil` for no cap.
    public var maxOpenConnections: Int?
    /// The longest a request head may take to arrive; `nil` for no limit.
    public var headerTimeout: Duration?
    /// The time a body may take beyond what its bytes earn at ``bodyMinimumRate``; `nil` for no limit.
    public var bodyTimeout: Duration?
    /// The bytes a second that earn a body one more second (0: the body has ``bodyTimeout`` in all).
    public var bodyMinimumRate: Int
    /// The longest a TLS handshake may take; `nil` for no limit.
    public var tlsHandshakeTimeout: Duration?
    /// The longest a connection may stay idle between requests; `nil` for no limit.
    public var keepAliveTimeout: Duration?

    /// Makes limits; by default those of ``standard``.
    public init(
        maxOpenConnections: Int? = nil, headerTimeout: Duration? = .seconds(30), bodyTimeout: Duration? = .seconds(30),
        bodyMinimumRate: Int = 1_024, tlsHandshakeTimeout: Duration? = .seconds(10),
        keepAliveTimeout: Duration? = .seconds(75)
    ) {
        self.maxOpenConnections = maxOpenConnections
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.bodyMinimumRate = max(0, bodyMinimumRate)
        self.tlsHandshakeTimeout = tlsHandshakeTimeout
        self.keepAliveTimeout = keepAliveTimeout
    }

    /// 30 seconds for a head, a body 30 seconds plus one a KiB, 10 seconds for
    /// a TLS handshake, 75 seconds idle between requests, and no cap on open
    /// connections (``DescriptorLimit/connectionCap(reserve:)`` gives one that
    /// fits the process's descriptor limit).
    public static var standard: ConnectionLimits { ConnectionLimits() }

    /// No time limits and no cap: a connection stays as long as its client likes.
    public static var unlimited: ConnectionLimits {
        ConnectionLimits(
            maxOpenConnections: nil, headerTimeout: nil, bodyTimeout: nil, bodyMinimumRate: 0, tlsHandshakeTimeout: nil,
            keepAliveTimeout: nil)
    }

    /// Tells the time limits of a server's connection that it now carries
    /// another protocol (a WebSocket, after `101 Switching Protocols`): none of
    /// them applies to it any more. Call it from the upgrade's handler; the
    /// protocol's own liveness checks (WebSocket pings) take over.
    public static func connectionUpgraded(_ channel: any Channel) {
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: ConnectionDeadlineHandler.self))?.upgraded()
        }
    }
}
