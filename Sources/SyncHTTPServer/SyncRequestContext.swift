public import Hummingbird
public import NIOCore

/// The Hummingbird request context of ``HTTPSyncServer``: Hummingbird's core
/// context plus the client's address, which ``LoginThrottle`` counts failed logins by.
public struct SyncRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The address of the connected client (the proxy's, behind a reverse proxy).
    public let remoteAddress: SocketAddress?

    /// Makes the context of a request that arrived on `source`'s channel.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }
}
