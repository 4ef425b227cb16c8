import NIOCore
import Synchronization

/// The responses a connection received and not yet read, or the error that ended it.
final class IMAPInbox: Sendable {
    private struct State {
        var responses: [IMAPResponse] = []
        var head = 0
        var failure: IMAPError?
        var waiter: (id: UInt64, continuation: CheckedContinuation<IMAPResponse?, any Error>)?
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Adds a response; wakes the reader.
    func push(_ response: IMAPResponse) {
        let waiter = state.withLock { state -> CheckedContinuation<IMAPResponse?, any Error>? in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.responses.append(response)
            return nil
        }
        waiter?.resume(returning: response)
    }

    /// Ends the inbox: the reader gets `error` once the responses before it are read.
    func fail(_ error: IMAPError) {
        let waiter = state.withLock { state -> CheckedContinuation<IMAPResponse?, any Error>? in
            if state.failure == nil { state.failure = error }
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(throwing: error)
    }

    /// The next response, or `nil` when `deadline` passes first.
    /// - Throws: ``IMAPError`` when the connection ended; `CancellationError`.
    func next(before deadline: ContinuousClock.Instant?) async throws -> IMAPResponse? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                try? await ContinuousClock().sleep(until: deadline)
                self?.expire(id, with: nil)
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<IMAPResponse?, any Error>) in
                enum Outcome { case response(IMAPResponse), failure(IMAPError), wait }
                let outcome = state.withLock { state -> Outcome in
                    if state.head < state.responses.count {
                        defer {
                            state.head += 1
                            if state.head == state.responses.count {
                                state.responses.removeAll(keepingCapacity: true)
                                state.head = 0
                            }
                        }
                        return .response(state.responses[state.head])
                    }
                    if let failure = state.failure { return .failure(failure) }
                    state.waiter = (id, continuation)
                    return .wait
                }
                switch outcome {
                case .response(let response): continuation.resume(returning: response)
                case .failure(let error): continuation.resume(throwing: error)
                case .wait: break
                }
            }
        } onCancel: {
            self.expire(id, with: CancellationError())
        }
    }

    /// Resumes the waiter `id`, if it still waits, with `nil` or `error`.
    private func expire(_ id: UInt64, with error: (any Error)?) {
        let waiter = state.withLock { state -> CheckedContinuation<IMAPResponse?, any Error>? in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }
}

/// Frames and parses what the server sends, and hands each response to the inbox.
final class IMAPInboundHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private var framer: IMAPResponseFramer
    private let inbox: IMAPInbox

    init(inbox: IMAPInbox, limits: IMAPResponseFramer.Limits) {
        self.inbox = inbox
        self.framer = IMAPResponseFramer(limits: limits)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        framer.append(buffer.readableBytesView)
        do {
            while let unit = try framer.next() {
                inbox.push(try IMAPParser.parse(unit))
            }
        } catch {
            inbox.fail(error)
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        inbox.fail(IMAPError(.connectionLost, "the IMAP server closed the connection"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        inbox.fail(IMAPError(.connectionLost, "the IMAP connection failed: \(error)"))
        context.close(promise: nil)
    }
}
