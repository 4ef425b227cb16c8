/// The client side of an exchange with a sync service, shared by every
/// stack: sends a request, retries transient failures, turns every failure
/// into a ``SyncClientError``, and decodes the answer into a `Decodable`
/// message type.
///
/// ```swift
/// struct ListAnswer: Decodable {
///     var objects: [SyncValue]
///     var result: Result
///     struct Result: Decodable { var servercounter: Int64; var more: Bool? }
/// }
///
/// let endpoint = SyncEndpoint(transport: transport, codecs: CodecSet([JSONCodec()]))
/// let answer = try await endpoint.send(endpoint.request(.get, "/rest/booking/list/0"), as: ListAnswer.self)
/// ```
///
/// ## Sending and retrying
/// ``send(_:idempotent:accepting:)`` returns a 2xx answer (or one of the statuses it is told the
/// protocol answers with). A transient failure — no
/// answer, 429, 503, another 5xx for an idempotent request — is sent again,
/// unchanged, after the wait ``retry`` gives (or the answer's
/// ``SyncResponse/retryAfter``), slept on ``sleeper``; hand it a `TestClock`
/// from `SyncTesting` and a test decides when the wait is over. Anything
/// else, and the last attempt's failure, is thrown as a ``SyncClientError``.
/// Cancelling the task stops the waiting and throws `CancellationError`.
///
/// ## Decoding
/// The answer's `Content-Type` picks the codec among ``codecs`` (the default
/// codec when it names none); the codec's ``SyncValue`` goes through
/// ``SyncValueDecoder`` into the message type.
///
/// The stack keeps what is its own: the paths, the message types and what
/// the answers mean.
public struct SyncEndpoint: Sendable {
    /// How requests reach the service.
    public let transport: any SyncClientTransport
    /// The codecs answers are read with; the first also encodes request bodies.
    public let codecs: CodecSet
    /// Which failures are retried, and after what wait.
    public let retry: RetryPolicy
    /// The clock the waits between attempts are slept on.
    public let sleeper: any Clock<Duration>

    /// The clock the waits between attempts are slept on.
    @available(*, deprecated, renamed: "sleeper")
    public var clock: any Clock<Duration> { sleeper }

    /// Makes an endpoint.
    /// - Parameters:
    ///   - transport: How requests reach the service (with credentials and other middleware).
    ///   - codecs: The codecs answers are read with; the first encodes request bodies.
    ///   - retry: Which failures are retried, and after what wait.
    ///   - sleeper: The clock the waits are slept on: a test passes a `TestClock`.
    public init(
        transport: any SyncClientTransport, codecs: CodecSet, retry: RetryPolicy = .default,
        sleeper: any Clock<Duration> = ContinuousClock()
    ) {
        self.transport = transport
        self.codecs = codecs
        self.retry = retry
        self.sleeper = sleeper
    }

    /// Makes an endpoint whose waits are slept on `clock`.
    @available(*, deprecated, renamed: "init(transport:codecs:retry:sleeper:)")
    public init(transport: any SyncClientTransport, codecs: CodecSet, retry: RetryPolicy = .default, clock: any Clock<Duration>) {
        self.init(transport: transport, codecs: codecs, retry: retry, sleeper: clock)
    }

    // MARK: Requests

    /// A request without a body that accepts answers in the default codec.
    public func request(_ method: SyncRequest.Method, _ path: String) -> SyncRequest {
        SyncRequest(method: method, path: path, accept: codecs.defaultCodec.primaryMediaType)
    }

    /// A request carrying `body` in the default codec, accepting answers in it.
    /// - Throws: ``SyncClientError`` (``SyncClientError/Code/invalidRequest``) when the body cannot be encoded.
    public func request(_ method: SyncRequest.Method, _ path: String, body: some Encodable) throws -> SyncRequest {
        let codec = codecs.defaultCodec
        let bytes: [UInt8]
        do {
            bytes = try codec.encode(try SyncValueEncoder().encode(body))
        } catch {
            throw SyncClientError(
                .invalidRequest, "\(method) \(Self.pathWithoutQuery(path)): the body cannot be encoded in \(codec.id): \(error)",
                underlying: error)
        }
        return SyncRequest(
            method: method, path: path, contentType: codec.primaryMediaType, accept: codec.primaryMediaType, body: bytes)
    }

    // MARK: Sending

    /// Sends `request`, retrying transient failures, and returns the 2xx answer.
    /// - Parameters:
    ///   - request: The request, sent unchanged on every attempt.
    ///   - idempotent: Whether sending it twice does no more than sending it
    ///     once, so that a 500 may be retried; `nil` takes the method's word
    ///     (``SyncRequest/Method/isIdempotent``).
    ///   - statuses: Statuses outside 2xx that the protocol answers with, returned as a 2xx answer is
    ///     (an Aquasync push on condition gets 409 and the changes to pull first).
    /// - Throws: ``SyncClientError``; `CancellationError` when the task is cancelled.
    public func send(_ request: SyncRequest, idempotent: Bool? = nil, accepting statuses: Set<Int> = []) async throws -> SyncResponse {
        let idempotent = idempotent ?? request.method.isIdempotent
        var random = SystemRandomNumberGenerator()
        var attempt = 1
        let elapsed = RetryPolicy.stopwatch(on: sleeper)
        while true {
            let outcome: Result<SyncResponse, TransportError>
            SyncStatus.running?.requestSent()
            do {
                outcome = .success(try await transport.send(request))
            } catch let error as TransportError {
                outcome = .failure(error)
            } catch let error as CancellationError {
                throw error
            } catch {
                throw SyncClientError(
                    .connectionFailed, "\(Self.describe(request)) failed: \(error)", underlying: error)
            }
            let wait: Duration
            switch outcome {
            case .success(let response) where response.isSuccess || statuses.contains(response.status):
                return response
            case .success(let response):
                guard attempt < retry.maxAttempts,
                    RetryPolicy.isTransient(status: response.status, idempotent: idempotent),
                    response.retryAfter.map({ $0 <= retry.maxRetryAfter }) ?? true
                else { throw failure(response, of: request, attempts: attempt) }
                wait = response.retryAfter ?? retry.jitteredDelay(beforeRetry: attempt, using: &random)
            case .failure(let error):
                guard attempt < retry.maxAttempts, RetryPolicy.isTransient(error) else {
                    throw SyncClientError(
                        Self.code(for: error),
                        "\(Self.describe(request)): \(error.message)\(Self.attemptsNote(attempt))", underlying: error)
                }
                wait = retry.jitteredDelay(beforeRetry: attempt, using: &random)
            }
            if case .failure(let error) = outcome, let budget = retry.maxElapsed, elapsed() + wait > budget {
                // No answer, and out of time for another attempt: the server cannot be reached.
                throw SyncClientError(
                    Self.code(for: error), "\(Self.describe(request)): \(error.message)\(Self.attemptsNote(attempt))",
                    underlying: error)
            }
            switch outcome {
            case .success(let response):
                SyncStatus.running?.retrying(after: wait, reason: "\(Self.describe(request)): the server answered \(response.status)")
            case .failure(let error):
                SyncStatus.running?.retrying(after: wait, reason: "\(Self.describe(request)): \(error.message)")
            }
            try await sleeper.sleep(for: wait)
            attempt += 1
        }
    }

    /// Sends `request` as ``send(_:idempotent:accepting:)`` does and decodes the answer
    /// into `type`, as ``decode(_:from:of:)`` does.
    /// - Throws: ``SyncClientError``; `CancellationError` when the task is cancelled.
    public func send<Answer: Decodable>(
        _ request: SyncRequest, idempotent: Bool? = nil, as type: Answer.Type = Answer.self
    ) async throws -> Answer {
        try decode(type, from: try await send(request, idempotent: idempotent), of: request)
    }

    // MARK: Decoding

    /// Decodes an answer to `request` into `type`, with the codec of the
    /// answer's content type (the default codec when it has none).
    /// - Throws: ``SyncClientError`` (``SyncClientError/Code/invalidResponse``)
    ///   for a content type no codec reads, bytes the codec cannot decode, or
    ///   content that does not fit `type`.
    public func decode<Answer: Decodable>(
        _ type: Answer.Type = Answer.self, from response: SyncResponse, of request: SyncRequest
    ) throws -> Answer {
        let codec = try codec(of: response, to: request)
        let value: SyncValue
        do {
            value = try codec.decode(response.body)
        } catch {
            throw SyncClientError(
                .invalidResponse, status: response.status,
                "\(Self.describe(request)): the answer is not valid \(codec.id): \(error)", underlying: error)
        }
        do {
            return try SyncValueDecoder().decode(type, from: value)
        } catch {
            throw SyncClientError(
                .invalidResponse, status: response.status,
                "\(Self.describe(request)): the answer is not a \(Answer.self): \(Self.describe(error))", underlying: error)
        }
    }

    /// Reads an answer to `request` with `read`, given the codec of its content type (the default codec
    /// when it has none): for an answer read otherwise than into a ``SyncValue`` first.
    /// - Throws: ``SyncClientError`` (``SyncClientError/Code/invalidResponse``) for a content type no
    ///   codec reads, or when `read` throws a ``CodecError``; what else `read` throws.
    package func read<Result>(
        _ response: SyncResponse, of request: SyncRequest, _ read: (any SyncCodec) throws -> Result
    ) throws -> Result {
        let codec = try codec(of: response, to: request)
        do {
            return try read(codec)
        } catch let error as CodecError {
            throw SyncClientError(
                .invalidResponse, status: response.status,
                "\(Self.describe(request)): the answer is not valid \(codec.id): \(error)", underlying: error)
        }
    }

    /// The codec of the answer's content type (the default codec when it has none).
    /// - Throws: ``SyncClientError`` (``SyncClientError/Code/invalidResponse``) for a content type no codec reads.
    private func codec(of response: SyncResponse, to request: SyncRequest) throws -> any SyncCodec {
        guard let contentType = response.contentType, !contentType.isEmpty else { return codecs.defaultCodec }
        guard let found = codecs.codec(forMediaType: contentType) else {
            throw SyncClientError(
                .invalidResponse, status: response.status,
                "\(Self.describe(request)): the answer's content type '\(contentType)' is not one this client reads (\(codecs.supportedMediaTypes.joined(separator: ", ")))"
            )
        }
        return found
    }

    // MARK: Messages

    /// The error for an answer outside 2xx: its status, and the service's message if it sent one.
    private func failure(_ response: SyncResponse, of request: SyncRequest, attempts: Int) -> SyncClientError {
        var said = ""
        if let contentType = response.contentType, let codec = codecs.codec(forMediaType: contentType),
            let message = (try? codec.decode(response.body))?["message"]?.stringValue
        {
            said = message
        } else if !response.body.isEmpty {
            said = String(decoding: response.body.prefix(300), as: UTF8.self)
        }
        return SyncClientError(
            SyncClientError.code(forStatus: response.status), status: response.status,
            "\(Self.describe(request)): server answered \(response.status)\(said.isEmpty ? "" : ": " + said)\(Self.attemptsNote(attempts))"
        )
    }

    /// The client error's code for a transport failure.
    private static func code(for error: TransportError) -> SyncClientError.Code {
        switch error.code {
        case .invalidResponse: .invalidResponse
        case .tlsFailed: .tlsFailed
        default: .connectionFailed
        }
    }

    private static func attemptsNote(_ attempts: Int) -> String {
        attempts > 1 ? " (after \(attempts) attempts)" : ""
    }

    /// `METHOD path`, without the query, which may hold tokens.
    private static func describe(_ request: SyncRequest) -> String {
        "\(request.method) \(request.pathWithoutQuery)"
    }

    private static func pathWithoutQuery(_ path: String) -> Substring {
        path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// A decoding error as `what (at path)`.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): context = c
        @unknown default: return "\(error)"
        }
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
        }
        return context.debugDescription + (path.isEmpty ? "" : " (at \(path))")
    }
}
