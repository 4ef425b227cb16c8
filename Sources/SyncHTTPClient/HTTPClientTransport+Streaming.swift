import AsyncHTTPClient
import NIOCore
import NIOHTTP1
public import SyncCore
import SyncHTTP

extension HTTPClientTransport {
    /// The answer to a streamed exchange (``send(_:adding:body:receive:)``), handed over as soon as its
    /// head has arrived, while its body still arrives.
    public struct StreamedAnswer: Sendable {
        /// The answer's head as a ``SyncCore/SyncResponse`` — status, content type, session, `Retry-After` —
        /// with an empty body.
        public let head: SyncResponse
        /// Every header of the answer, in the order and spelling the server sent.
        public let headers: [(name: String, value: String)]
        /// The body, in the pieces the connection delivers them.
        public let body: Body

        /// The first value of the header `name` (in any case), or `nil`.
        public func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// An answer's body as it arrives: pieces are read only as the reader asks for them (the
        /// connection's back-pressure holds). Failing to read it — the connection cut, the time-out
        /// passed — throws a ``SyncCore/TransportError``.
        public struct Body: AsyncSequence, Sendable {
            /// A piece of the body.
            public typealias Element = ByteBuffer

            let base: HTTPClientResponse.Body
            let failure: @Sendable (any Error) -> TransportError

            /// Reads the body's pieces in order.
            public struct AsyncIterator: AsyncIteratorProtocol {
                var base: HTTPClientResponse.Body.AsyncIterator
                let failure: @Sendable (any Error) -> TransportError

                /// The next piece, or `nil` at the end.
                /// - Throws: ``SyncCore/TransportError`` when the body cannot be read to its end.
                public mutating func next() async throws -> ByteBuffer? {
                    do {
                        return try await base.next()
                    } catch {
                        throw failure(error)
                    }
                }
            }

            /// An iterator over the pieces.
            public func makeAsyncIterator() -> AsyncIterator {
                AsyncIterator(base: base.makeAsyncIterator(), failure: failure)
            }
        }
    }

    /// A request body read a piece at a time as the connection takes it, never whole in memory: a file's
    /// upload.
    ///
    /// ```swift
    /// let body = HTTPClientTransport.StreamedBody(length: size) {
    ///     let piece = try file.read(upToCount: 1 << 16) ?? Data()
    ///     return piece.isEmpty ? nil : ByteBuffer(bytes: piece)
    /// }
    /// ```
    public struct StreamedBody: Sendable {
        /// The body's length in bytes, sent as `Content-Length`; the pieces must add up to it.
        public let length: Int64
        /// Reads the next piece, or `nil` at the end. It is called on an event loop of the client, the
        /// first time when the request starts and then each time only once the piece before has been
        /// handed to the connection and the connection could take more, so that at most about one
        /// piece is in memory however slow the network: it must not block for long (a read of a local
        /// file is fine). What it throws fails the request.
        public let next: @Sendable () throws -> ByteBuffer?

        /// Makes a body of `length` bytes read by `next`.
        public init(length: Int64, next: @escaping @Sendable () throws -> ByteBuffer?) {
            self.length = length
            self.next = next
        }
    }

    /// Sends `request` with `headers` added and `body` streamed, and hands the answer to `receive` as
    /// soon as its head has arrived: for bodies too large to hold in memory, such as a file's upload
    /// or download.
    ///
    /// The request is made as ``send(_:)`` makes it (credentials, session, device, user agent, content
    /// type), with three differences: `headers` are added as given; `body`, when given, is sent in
    /// place of the request's own body, read as the connection takes it (``StreamedBody``); and nothing
    /// is compressed or decoded — the request's body goes as it is, and no `Accept-Encoding` is sent
    /// unless `headers` hold one (a caller that asks for a compressed answer decodes it). The whole
    /// exchange, the answer's body included, must end within ``Configuration/timeout``.
    ///
    /// The answer's body arrives as the connection delivers it — except for a request sent with a
    /// streamed `body` (an upload), whose answer is read whole, up to
    /// ``Configuration/maxResponseBytes``, before `receive` is called.
    ///
    /// ```swift
    /// let etag = try await transport.send(SyncRequest(method: .get, path: "/files/photo.jpg")) { answer in
    ///     for try await piece in answer.body { try file.write(contentsOf: piece.readableBytesView) }
    ///     return answer.header("ETag")
    /// }
    /// ```
    ///
    /// To pass the exchange through client middleware, call this in the last `next` of the chain.
    /// - Parameters:
    ///   - request: The request; its path is appended to ``baseURL``.
    ///   - headers: Headers added to the request, as they are.
    ///   - body: The body to send in place of `request.body`, or `nil` for that.
    ///   - receive: Reads the answer: its head, headers and body.
    /// - Returns: What `receive` returns.
    /// - Throws: ``SyncCore/TransportError`` when no answer arrives or its body cannot be read (by
    ///   ``StreamedAnswer/Body``); what `receive` throws otherwise, as it is. What `body` throws comes
    ///   back as the ``SyncCore/TransportError/underlying`` error of a
    ///   ``SyncCore/TransportError/Code/connectionFailed``.
    public func send<Result>(
        _ request: SyncRequest, adding headers: [(name: String, value: String)] = [], body: StreamedBody? = nil,
        receive: (StreamedAnswer) async throws -> Result
    ) async throws -> Result {
        var httpRequest = makeHTTPRequest(request, compressedAnswers: false)
        for header in headers { httpRequest.headers.add(name: header.name, value: header.value) }
        let what = "\(request.method) \(request.pathWithoutQuery)"
        let deadline = NIODeadline.now() + TimeAmount(configuration.timeout)
        let response: HTTPClientResponse
        do {
            if let body {
                response = try await upload(httpRequest, body: body, deadline: deadline, what: what)
            } else {
                response = try await client.execute(httpRequest, deadline: deadline)
            }
        } catch {
            throw failure(error, what: what)
        }
        let head = SyncResponse(
            status: Int(response.status.code),
            contentType: response.headers.first(name: "content-type"),
            session: response.headers["set-cookie"].lazy.compactMap(SessionCookie.session(fromSetCookieHeader:)).first,
            retryAfter: RetryAfterHeader.delay(from: response.headers.first(name: "retry-after")))
        let answer = StreamedAnswer(
            head: head, headers: response.headers.map { ($0.name, $0.value) },
            body: StreamedAnswer.Body(base: response.body, failure: { [self] in failure($0, what: what) }))
        return try await receive(answer)
    }

    /// Sends `request` with `body` through AsyncHTTPClient's `StreamWriter`, each piece read on the event
    /// loop in a turn after the one that wrote the piece before — once the loop has seen whether the
    /// connection can take more (a chain of immediate callbacks, or a reader on another thread, would
    /// queue the whole body) — and reads the answer whole, up to ``Configuration/maxResponseBytes``.
    private func upload(
        _ request: HTTPClientRequest, body: StreamedBody, deadline: NIODeadline, what: String
    ) async throws -> HTTPClientResponse {
        let loop = client.eventLoopGroup.any()
        let streamed = HTTPClient.Body.stream(contentLength: body.length) { writer in
            @Sendable func next() -> EventLoopFuture<Void> {
                let piece: ByteBuffer?
                do {
                    piece = try body.next()
                } catch {
                    return loop.makeFailedFuture(error)
                }
                guard let piece else { return loop.makeSucceededVoidFuture() }
                return writer.write(.byteBuffer(piece)).flatMap { loop.flatSubmit { next() } }
            }
            return next()
        }
        let oldStyle = try HTTPClient.Request(url: request.url, method: request.method, headers: request.headers, body: streamed)
        let answer: HTTPClient.Response
        do {
            answer = try await client.execute(
                request: oldStyle, delegate: ResponseAccumulator(request: oldStyle, maxBodySize: configuration.maxResponseBytes),
                deadline: deadline
            ).futureResult.get()
        } catch is ResponseAccumulator.ResponseTooBigError {
            throw TransportError(.invalidResponse, "\(what): the answer is larger than \(configuration.maxResponseBytes) bytes")
        }
        return HTTPClientResponse(
            version: answer.version, status: answer.status, headers: answer.headers,
            body: answer.body.map { .bytes($0) } ?? HTTPClientResponse.Body())
    }
}
