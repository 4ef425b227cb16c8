import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SyncCore
import SyncJSON

/// One device of the fast-sync run, speaking Aquasync's wire itself (docs/aquasync.md#wire) on a connection of
/// its own: each sync saves one new contact and sends it with `POST /deltas?latestUST={ust}&deviceToken={token}`
/// (the push on condition: one request, since nothing waits to be pulled on an account of one device), then
/// moves its `latestUST` to the answer's. The device's own bookkeeping is a few bytes, so that the load
/// generator, which shares the machine's cores with the server, costs the server as little as it can: what
/// a device library does around the request (its store, its journal) is measured by the upload and pull.
///
/// ``WireDevice/Start`` without a deadline runs the first sync, which is not timed (`ready` completes when it
/// is done); with a deadline it begins the timed syncs, which go on until then; `finished` then has every
/// timed sync's duration.
final class WireDevice: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// The event that begins the first sync (no deadline) or the timed ones.
    struct Start: Sendable { let deadline: NIODeadline? }

    private let index: Int
    private let host: String
    private let authorization: String
    private let token = UUID().uuidString.lowercased()
    private var identifiers = DeviceIdentifiers()
    private let ready: EventLoopPromise<Void>
    private let finished: EventLoopPromise<[Duration]>
    private var latestUST: Int64 = 0
    private var round = 0
    private var deadline: NIODeadline?
    private var sentAt = NIODeadline.now()
    private var status: HTTPResponseStatus = .ok
    private var answer: ByteBuffer?
    private var latencies: [Duration] = []

    init(index: Int, host: String, authorization: String, ready: EventLoopPromise<Void>, finished: EventLoopPromise<[Duration]>) {
        self.index = index
        self.host = host
        self.authorization = authorization
        self.ready = ready
        self.finished = finished
        latencies.reserveCapacity(4_096)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let start = event as? Start else { return context.fireUserInboundEventTriggered(event) }
        deadline = start.deadline
        sendSync(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status
            answer = nil
        case .body(var part):
            if answer == nil { answer = part } else { answer!.writeBuffer(&part) }
        case .end:
            let body = answer.map { String(buffer: $0) } ?? ""
            guard status == .ok, let ust = Self.latestUST(in: body) else {
                return fail(context: context, "device \(index): the sync answered \(status.code): \(body.prefix(300))")
            }
            latestUST = ust
            guard let deadline else { return ready.succeed() }
            let now = NIODeadline.now()
            latencies.append(.nanoseconds(Int64(now.uptimeNanoseconds - sentAt.uptimeNanoseconds)))
            if now < deadline {
                sendSync(context: context)
            } else {
                finished.succeed(latencies)
                context.close(promise: nil)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context: context, "device \(index): \(error)")
    }

    func channelInactive(context: ChannelHandlerContext) {
        let reason = BenchmarkError("device \(index): the server closed the connection")
        ready.fail(reason)
        finished.fail(reason)
        context.fireChannelInactive()
    }

    private func fail(context: ChannelHandlerContext, _ reason: String) {
        ready.fail(BenchmarkError(reason))
        finished.fail(BenchmarkError(reason))
        context.close(promise: nil)
    }

    /// Saves the next contact and sends it: a DeltaPack of one delta, the device's columns set as a device
    /// library sets them.
    private func sendSync(context: ChannelHandlerContext) {
        let milliseconds = Int64(Date().timeIntervalSince1970 * 1_000)
        let pack = """
            {"_id":"\(identifiers.next())","Contact":[{"gid":"\(identifiers.next())",\
            "deviceToken":"\(token)","localTimestamp":\(milliseconds),"isDeleted":false,\
            "name":"contact \(index).\(round)","round":\(round)}]}
            """
        round += 1
        var head = HTTPRequestHead(
            version: .http1_1, method: .POST, uri: "/deltas?latestUST=\(latestUST)&deviceToken=\(token)")
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Authorization", value: authorization)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Accept", value: "application/json")
        head.headers.add(name: "Content-Length", value: String(pack.utf8.count))
        sentAt = .now()
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: pack)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The `latestUST` of a push's answer (`{"id":"success","ustBefore":B,"latestUST":L}`).
    static func latestUST(in answer: String) -> Int64? {
        guard case .integer(let ust)? = (try? JSONCodec().decode(Array(answer.utf8)))?["latestUST"] else { return nil }
        return ust
    }
}

/// The fast-sync run's devices: connected, each through its first sync, and then timed together.
enum WireDevices {
    /// Connects `accounts.count` devices to `url` on `group`, one per account, and then runs each one's
    /// untimed first sync. The connections come first, all of them: a server that hands connections to its
    /// event loops in turn, from a counter its other work also turns, would put every connection on one
    /// loop if each were opened after the one before had synced.
    /// - Returns: Each device's channel, and the future of its timed syncs' durations.
    static func connect(
        to url: URL, accounts: [String], password: String, group: any EventLoopGroup
    ) async throws -> [(channel: any Channel, finished: EventLoopFuture<[Duration]>)] {
        guard let host = url.host, let port = url.port else { throw BenchmarkError("no port in \(url)") }
        var devices: [(channel: any Channel, finished: EventLoopFuture<[Duration]>)] = []
        var firstSyncs: [EventLoopFuture<Void>] = []
        for (index, account) in accounts.enumerated() {
            let loop = group.next()
            let ready = loop.makePromise(of: Void.self)
            let finished = loop.makePromise(of: [Duration].self)
            let authorization = "Basic " + Data("\(account):\(password)".utf8).base64EncodedString()
            let channel = try await ClientBootstrap(group: loop)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(
                            WireDevice(
                                index: index, host: "\(host):\(port)", authorization: authorization, ready: ready,
                                finished: finished))
                    }
                }
                .connect(host: host, port: port).get()
            firstSyncs.append(ready.futureResult)
            devices.append((channel, finished.futureResult))
        }
        for device in devices { device.channel.pipeline.fireUserInboundEventTriggered(WireDevice.Start(deadline: nil)) }
        for sync in firstSyncs { try await sync.get() }
        return devices
    }
}

/// New ids as Anchorage's device library makes them (`TimeOrderedUUID`, docs/stores.md): UUIDs of version 7 in
/// lower case, which begin with the millisecond they were made and then count the ids made within it, so each
/// device's ids increase. The random part comes from a generator seeded once: Foundation's `UUID()` opens and
/// reads `/dev/urandom` for each one on Linux, which took a fifth of the load generator's time, on the cores it
/// shares with the server.
struct DeviceIdentifiers {
    private var random = SeededGenerator(seed: .random(in: .min ... .max))
    private var milliseconds: UInt64 = 0
    private var counter: UInt64 = 0

    /// The next identifier.
    mutating func next() -> String {
        let now = UInt64(max(0, Date().timeIntervalSince1970 * 1_000))
        if now > milliseconds {
            milliseconds = now
            counter = random.next() & 0x7ff
        } else if counter < 0xfff {
            counter += 1
        } else {
            milliseconds += 1
            counter = random.next() & 0x7ff
        }
        let high = (milliseconds & 0xffff_ffff_ffff) << 16 | 0x7000 | counter  // version 7
        let low = random.next() & 0x3fff_ffff_ffff_ffff | 0x8000_0000_0000_0000  // RFC 9562 variant
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in withUnsafeBytes(of: (high.bigEndian, low.bigEndian), { Array($0) }).enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
