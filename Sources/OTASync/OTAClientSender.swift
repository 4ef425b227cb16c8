import Synchronization
import SyncCore

/// Sends one of the device's messages to the server and reads the answer:
/// the bytes in the client's codec, the HTTP request, the `ota-session`
/// cookie. The client's ``OTAClient/endpoint`` sends a message that got no
/// answer (or a 429 or 5xx) again, byte for byte, as ``OTAClient/Configuration/retry``
/// says; the server answers a repeat from its reply cache. This is the
/// client's one place that touches the network.
struct OTAClientSender {
    let client: OTAClient
    /// The client's endpoint, counting every attempt.
    private let endpoint: SyncEndpoint
    private let attempts = AttemptCounter()
    /// The session cookie the server set.
    private var cookie: String?
    /// Requests sent, counting those sent again.
    var roundTrips: Int { attempts.count }

    init(client: OTAClient) {
        self.client = client
        let endpoint = client.endpoint
        self.endpoint = SyncEndpoint(
            transport: endpoint.transport.with(attempts), codecs: endpoint.codecs, retry: endpoint.retry,
            sleeper: endpoint.sleeper)
    }

    /// Sends a message and reads the answer.
    /// - Throws: ``SyncCore/SyncClientError`` when the message cannot be delivered (after the
    ///   retries) or the answer cannot be read, and (``SyncCore/SyncClientError/Code/refused``, stack
    ///   `"ota"`) for an answer whose header refuses the message.
    mutating func send(_ message: OTAMessage) async throws -> OTAMessage {
        let body = try client.codec.encode(message.value)
        let mediaType = OTAMediaType.answer(for: client.codec)
        let request = SyncRequest(
            method: .post, path: client.configuration.basePath, contentType: mediaType, accept: mediaType, session: cookie,
            userAgent: "Anchorage-OTA/\(AnchorageVersion.current)", body: body)
        // A repeat is recognised by the server and answered from its reply cache.
        let response = try await endpoint.send(request, idempotent: true)
        if let session = response.session { cookie = session }
        let reply: OTAMessage
        do {
            reply = try OTAMessage(try client.codec.decode(response.body))
        } catch {
            throw SyncClientError(
                .invalidResponse, status: response.status,
                "\(request.method) \(request.pathWithoutQuery): the answer is not an OTA message in \(client.codec.id): \(error)",
                underlying: error)
        }
        if let result = reply.header.result?.first { throw SyncClientError.ota(result) }
        return reply
    }
}

/// Counts the requests that go out, retries included.
private final class AttemptCounter: SyncClientMiddleware, Sendable {
    private let sent = Mutex(0)

    var count: Int { sent.withLock { $0 } }

    func intercept(
        _ request: SyncRequest, next: @Sendable (SyncRequest) async throws -> SyncResponse
    ) async throws -> SyncResponse {
        sent.withLock { $0 += 1 }
        return try await next(request)
    }
}
