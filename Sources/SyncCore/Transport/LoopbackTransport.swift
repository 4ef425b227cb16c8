/// Calls a service in-process, through the same authentication an HTTP server
/// applies: the transport for tests and for apps that embed the server.
///
/// ```swift
/// let transport = LoopbackTransport(service: router, authenticator: StaticAuthenticator(passwords: ["ada": "pw"]))
/// ```
public struct LoopbackTransport: SyncClientTransport {
    /// The service called.
    public let service: any SyncService
    /// The authenticator applied before the service.
    public let authenticator: any SyncAuthenticator
    /// The largest request body accepted (413 above it).
    public let maxRequestBytes: Int

    /// Makes a loopback transport.
    public init(service: any SyncService, authenticator: any SyncAuthenticator, maxRequestBytes: Int = 64 << 20) {
        self.service = service
        self.authenticator = authenticator
        self.maxRequestBytes = maxRequestBytes
    }

    /// Authenticates the request and hands it to the service, as a server would.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        guard request.body.count <= maxRequestBytes else {
            return SyncServiceError.payloadTooLarge(limit: maxRequestBytes).response
        }
        guard let account = try await authenticator.authenticate(request.credentials) else {
            return SyncServiceError.unauthorized().response
        }
        return await service.respond(to: request, context: ServiceContext(account: account))
    }
}
