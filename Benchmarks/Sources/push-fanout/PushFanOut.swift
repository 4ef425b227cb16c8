// push-fanout: one write notifying thousands of push streams. An `anchorage serve` child process (SQLite) holds
// the streams; this process holds the clients, as lean WebSocket clients on SwiftNIO, so that the server's memory
// and the write's answer are measured apart from the clients. Not a timed test: run it by hand,
//
//     swift build -c release --product anchorage                          # at the repository's root
//     cd Benchmarks && swift run -c release push-fanout --clients 15000 --writes 5
//
// and write the figures in docs/push.md with the machine they were taken on.
import AsyncHTTPClient
import BenchmarkServers
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

@main
struct PushFanOut {
    static func main() async throws {
        let options = try FanOutOptions(CommandLine.arguments.dropFirst())
        let descriptors = raiseDescriptorLimit()
        guard descriptors > options.clients + 64 else {
            throw ServerProcessError(
                description: "this process may open \(descriptors) files, too few for \(options.clients) clients")
        }
        print("push fan-out, \(ProcessInfo.processInfo.processorCount) cores, "
            + "\(ProcessInfo.processInfo.operatingSystemVersionString), \(options.clients) clients")
        let folder = NSTemporaryDirectory() + "push-fanout-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let server = try ServerProcess(
            anchorage: options.anchorage, store: "sqlite:\(folder)/server.sqlite", accounts: [account], folder: folder,
            extraArguments: [
                "--push-max-devices", String(options.clients + 1), "--push-ping-interval", "3600",
            ])
        defer { server.stop() }
        let started = ProcessMemory(pid: server.pid).current

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        try await register(options.clients, at: server.url, with: http)
        let registered = ProcessMemory(pid: server.pid).current

        let tally = FrameTally(clients: options.clients)
        // The streams have an event loop of their own, so that reading their frames never delays the write's answer.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await connect(options.clients, to: server.url, tally: tally, group: group)
        try await tally.waitUntilEveryClient(received: 1)  // each first connection's resync
        let connected = ProcessMemory(pid: server.pid).current
        print("server resident memory: \(megabytes(started)) MiB started, \(megabytes(registered)) MiB with "
            + "\(options.clients) devices registered (\((registered - started) / options.clients) bytes each), "
            + "\(megabytes(connected)) MiB with every stream open (\((connected - registered) / options.clients / 1_024) KiB a stream)")

        let clock = ContinuousClock()
        for write in 1...options.writes {
            let serverCPU = cpuSeconds(of: server.pid)
            let clientCPU = cpuSeconds(of: getpid())
            let sent = clock.now
            try await writeOneObject(write, to: server.url, with: http)
            let answered = clock.now
            let arrivals = try await tally.waitUntilEveryClient(received: write + 1)
            let afterAnswer = arrivals.map { answered.duration(to: $0) }.sorted()
            print("write \(write): answered in \(milliseconds(sent.duration(to: answered))) ms; "
                + "every client notified \(milliseconds(afterAnswer.last!)) ms after the answer "
                + "(half of them by \(milliseconds(afterAnswer[afterAnswer.count / 2])) ms); CPU: server "
                + "\(Int((cpuSeconds(of: server.pid) - serverCPU) * 1_000)) ms, clients \(Int((cpuSeconds(of: getpid()) - clientCPU) * 1_000)) ms")
        }
        try await http.shutdown()
        try await group.shutdownGracefully()
        print("server peak resident memory: \(megabytes(ProcessMemory(pid: server.pid).peak)) MiB")
    }

    static let account = "fan"

    static var authorization: String {
        "Basic " + Data("\(account):\(ServerProcess.password)".utf8).base64EncodedString()
    }

    /// Registers devices `fan-0` … for `appsync/booking`, 64 requests at a time.
    static func register(_ clients: Int, at url: URL, with http: HTTPClient) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<clients {
                if index >= 64 { try await group.next() }
                group.addTask {
                    var request = HTTPClientRequest(url: url.absoluteString + "/push/register")
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: authorization)
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: #"{"deviceToken": "fan-\#(index)", "collections": ["appsync/booking"]}"#))
                    let response = try await http.execute(request, timeout: .seconds(30))
                    _ = try await response.body.collect(upTo: 1 << 16)
                    guard response.status == .ok else {
                        throw ServerProcessError(description: "registering fan-\(index) answered \(response.status)")
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Opens one push stream per device, 256 connections at a time.
    static func connect(_ clients: Int, to url: URL, tally: FrameTally, group: any EventLoopGroup) async throws {
        guard let host = url.host, let port = url.port else { throw ServerProcessError(description: "no port in \(url)") }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for index in 0..<clients {
                if index >= 256 { try await tasks.next() }
                let request = "GET /push/stream?deviceToken=fan-\(index)&after=0 HTTP/1.1\r\nHost: \(host):\(port)\r\n"
                    + "Authorization: \(authorization)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
                tasks.addTask {
                    _ = try await ClientBootstrap(group: group).channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                PushStreamClient(index: index, request: request, tally: tally))
                        }
                    }.connect(host: host, port: port).get()
                }
            }
            try await tasks.waitForAll()
        }
    }

    /// Writes one appSync object as the device `writer`, which is not one of the streams.
    static func writeOneObject(_ number: Int, to url: URL, with http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: url.absoluteString + "/rest/booking/update")
        request.method = .POST
        request.headers.add(name: "Authorization", value: authorization)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Device-Token", value: "writer")
        let now = Int(Date().timeIntervalSince1970)
        request.body = .bytes(ByteBuffer(string: """
            {"objects": [{"guid": "fan-\(number)", "isdeleted": 0, "timestamp_created": \(now), \
            "timestamp_lastupdate": \(now), "pk": "fan-\(number)"}]}
            """))
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 16)
        guard response.status == .ok else {
            throw ServerProcessError(description: "the write answered \(response.status): \(String(buffer: body))")
        }
    }

    /// Raises this process's open-file limit to its hard limit; returns the limit in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return Int(clamping: limit.rlim_cur)
    }

    static func megabytes(_ bytes: Int) -> Int { bytes / 1_048_576 }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15)
    }
}

/// The command line: `--clients N` (15,000), `--writes N` (5), `--anchorage PATH` (the release build of the
/// repository this folder is in).
struct FanOutOptions {
    var clients = 15_000
    var writes = 5
    var anchorage = "../.build/release/anchorage"

    init<Arguments: Collection<String>>(_ arguments: Arguments) throws {
        var remaining = Array(arguments)[...]
        while let argument = remaining.popFirst() {
            guard let value = remaining.popFirst() else {
                throw ServerProcessError(description: "\(argument) needs a value; usage: push-fanout [--clients N] [--writes N] [--anchorage PATH]")
            }
            switch argument {
            case "--clients": clients = max(1, Int(value) ?? clients)
            case "--writes": writes = max(1, Int(value) ?? writes)
            case "--anchorage": anchorage = value
            default: throw ServerProcessError(description: "unknown argument \(argument)")
            }
        }
    }
}

/// Counts the text frames each client has received and when the last of them arrived, and wakes the one
/// waiter once every client has received a given number.
final class FrameTally: Sendable {
    private struct State {
        var received: [Int]
        var arrivals: [ContinuousClock.Instant]
        var waiting: (count: Int, continuation: CheckedContinuation<[ContinuousClock.Instant], any Error>)?
        var failure: String?
    }

    private let state: Mutex<State>

    init(clients: Int) {
        state = Mutex(State(received: Array(repeating: 0, count: clients), arrivals: Array(repeating: .now, count: clients)))
    }

    /// Notes a text frame for client `index`.
    func frame(for index: Int, at instant: ContinuousClock.Instant) {
        let woken = state.withLock { state -> (CheckedContinuation<[ContinuousClock.Instant], any Error>, [ContinuousClock.Instant])? in
            state.received[index] += 1
            state.arrivals[index] = instant
            guard let waiting = state.waiting, state.received[index] == waiting.count,
                state.received.allSatisfy({ $0 >= waiting.count })
            else { return nil }
            state.waiting = nil
            return (waiting.continuation, state.arrivals)
        }
        if let (continuation, arrivals) = woken { continuation.resume(returning: arrivals) }
    }

    /// Notes that client `index` failed; the waiter gets an error.
    func fail(_ index: Int, _ reason: String) {
        let waiting = state.withLock { state in
            state.failure = state.failure ?? "client \(index): \(reason)"
            defer { state.waiting = nil }
            return state.waiting?.continuation
        }
        waiting?.resume(throwing: ServerProcessError(description: "client \(index): \(reason)"))
    }

    /// Waits until every client has received `count` text frames; returns when each one's latest arrived.
    @discardableResult
    func waitUntilEveryClient(received count: Int) async throws -> [ContinuousClock.Instant] {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<[ContinuousClock.Instant], any Error>? in
                if let failure = state.failure { return .failure(ServerProcessError(description: failure)) }
                if state.received.allSatisfy({ $0 >= count }) { return .success(state.arrivals) }
                state.waiting = (count, continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}

/// One push stream's client: sends the WebSocket upgrade, checks the `101`, then reads frames (the server's are
/// never masked), noting each text frame in the tally and answering pings.
final class PushStreamClient: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let index: Int
    private let request: String
    private let tally: FrameTally
    private var upgraded = false
    private var pending = ByteBuffer()

    init(index: Int, request: String, tally: FrameTally) {
        self.index = index
        self.request = request
        self.tally = tally
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrived = ContinuousClock.now
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        if !upgraded {
            guard let view = pending.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            let headLength = view.upperBound - pending.readableBytesView.startIndex
            let head = pending.readString(length: headLength) ?? ""
            guard head.hasPrefix("HTTP/1.1 101") else {
                tally.fail(index, "the upgrade was answered \(head.prefix(while: { $0 != "\r" }))")
                context.close(promise: nil)
                return
            }
            upgraded = true
        }
        while let (opcode, payload) = nextFrame() {
            switch opcode {
            case 0x1: tally.frame(for: index, at: arrived)
            case 0x9: context.writeAndFlush(wrapOutboundOut(Self.maskedFrame(opcode: 0xA, payload: payload)), promise: nil)
            case 0x8: context.close(promise: nil)
            default: break
            }
        }
        pending.discardReadBytes()
    }

    func channelInactive(context: ChannelHandlerContext) {
        tally.fail(index, "the server closed the stream")
    }

    /// Takes one whole frame off `pending`, if it holds one.
    private func nextFrame() -> (opcode: UInt8, payload: ByteBuffer)? {
        guard let first = pending.getInteger(at: pending.readerIndex, as: UInt8.self),
            let second = pending.getInteger(at: pending.readerIndex + 1, as: UInt8.self)
        else { return nil }
        var headerLength = 2
        var length = Int(second & 0x7F)
        if length == 126 {
            guard let extended = pending.getInteger(at: pending.readerIndex + 2, as: UInt16.self) else { return nil }
            length = Int(extended)
            headerLength = 4
        } else if length == 127 {
            guard let extended = pending.getInteger(at: pending.readerIndex + 2, as: UInt64.self) else { return nil }
            length = Int(extended)
            headerLength = 10
        }
        guard pending.readableBytes >= headerLength + length else { return nil }
        pending.moveReaderIndex(forwardBy: headerLength)
        guard let payload = pending.readSlice(length: length) else { return nil }
        return (first & 0x0F, payload)
    }

    /// A client frame: final, masked (with a zero mask, which leaves the payload as it is).
    private static func maskedFrame(opcode: UInt8, payload: ByteBuffer) -> ByteBuffer {
        var frame = ByteBuffer()
        frame.writeInteger(0x80 | opcode)
        frame.writeInteger(0x80 | UInt8(min(125, payload.readableBytes)))
        frame.writeInteger(UInt32(0))
        frame.writeImmutableBuffer(payload)
        return frame
    }
}
