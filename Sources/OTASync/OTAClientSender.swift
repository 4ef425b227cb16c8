import SyncCore

/// Sends one of the device's messages to the server and reads the answer:
/// the bytes in the client's codec, the HTTP request, the `ota-session`
/// cookie, and sending again — byte for byte — a message that got no answer.
/// This is the client's one place that touches the network.
struct OTAClientSender {
    let client: OTAClient
    /// The session cookie the server set.
    private var cookie: String?
    /// Requests sent, counting those sent again.
    private(set) var roundTrips = 0

    init(client: OTAClient) {
        self.client = client
    }

    /// Sends a message and reads the answer.
    /// - Throws: ``OTAClientError`` for an HTTP error status or an answer whose header refuses the
    ///   message, ``TransportError`` when the server cannot be reached after ``OTAClient/retries``.
    mutating func send(_ message: OTAMessage) async throws -> OTAMessage {
        let body = try client.codec.encode(message.value)
        let mediaType = OTAMediaType.answer(for: client.codec)
        var attempt = 0
        while true {
            do {
                roundTrips += 1
                let response = try await client.transport.send(
                    SyncRequest(
                        method: .post, path: client.path, contentType: mediaType, accept: mediaType, session: cookie,
                        userAgent: "Anchorage-OTA/\(AnchorageVersion.current)", body: body))
                guard response.isSuccess else {
                    if response.status >= 500, attempt < client.retries {
                        attempt += 1
                        continue
                    }
                    throw OTAClientError(OTAResult(.serviceError, "HTTP \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))"))
                }
                if let session = response.session { cookie = session }
                let reply = try OTAMessage(try client.codec.decode(response.body))
                if let result = reply.header.result?.first { throw OTAClientError(result) }
                return reply
            } catch is TransportError where attempt < client.retries {
                attempt += 1
            }
        }
    }
}
