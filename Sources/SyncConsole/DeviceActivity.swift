#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SyncCore
import Synchronization

/// What the server has seen of each device since it started: its stack, codec, last request and the
/// bytes it sent and received — the operator console's device list.
///
/// Mount its ``middleware`` around the server's router and every authenticated request to a sync
/// stack (a path under one of ``stacks``; the console's own requests are not) is counted for its
/// account and device. A device is known by the name it gives: the `X-Device-Token` header
/// (``SyncCore/SyncRequest/device``; `anchorage sync` and every client with push send it), else
/// Aquasync's `deviceToken` query parameter, else its `User-Agent` (`unnamed (agent)`). The activity
/// is kept in memory: a restarted server starts empty, and knows each device again at its next sync.
/// At most ``maxDevicesPerAccount`` devices are kept per account (the least recently seen go first).
///
/// ```swift
/// let activity = DeviceActivity(codecs: codecs)
/// let service = router.with(activity.middleware)
/// let phones = activity.devices(of: "ada")
/// ```
public final class DeviceActivity: Sendable {
    /// One device's activity.
    public struct Device: Sendable, Hashable {
        /// The device's name (see ``DeviceActivity``).
        public var device: String
        /// The stack of its last request: `Aquasync`, `appSync`, `OTA` or `push` (see ``DeviceActivity/stacks``).
        public var stack: String
        /// The codec of its last request or answer with a body, by name (`MessagePack`); `nil` before one.
        public var codec: String?
        /// When its last request was answered.
        public var lastSeen: Date
        /// The status of that answer.
        public var lastStatus: Int
        /// Its requests since the server started.
        public var requests: Int
        /// The request body bytes it sent.
        public var bytesIn: Int
        /// The answer body bytes it was sent.
        public var bytesOut: Int
        /// Its last `User-Agent`, if any.
        public var userAgent: String?
    }

    /// The most devices kept per account.
    public let maxDevicesPerAccount: Int
    private let codecs: CodecSet
    /// The stack name of each mount path whose requests are counted.
    public let stacks: [String: String]
    private let now: @Sendable () -> Date
    private let accounts: Mutex<[AccountID: [String: Device]]> = Mutex([:])

    /// The stack name of each standard mount.
    public static let standardStacks = ["/deltas": "Aquasync", "/rest": "appSync", "/ota": "OTA", "/push": "push"]

    /// Makes an empty activity.
    /// - Parameters:
    ///   - codecs: The codecs the server speaks, to name a request's codec by its media type.
    ///   - stacks: The stack name of each mount path.
    ///   - maxDevicesPerAccount: The most devices kept per account.
    ///   - now: The wall clock (a fixed one in tests).
    public init(
        codecs: CodecSet, stacks: [String: String] = standardStacks, maxDevicesPerAccount: Int = 1_000,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.codecs = codecs
        self.stacks = stacks
        self.maxDevicesPerAccount = max(1, maxDevicesPerAccount)
        self.now = now
    }

    /// The middleware that counts every request it passes on.
    public var middleware: any SyncServiceMiddleware { Middleware(activity: self) }

    /// The devices of `account`, the most recently seen first.
    public func devices(of account: AccountID) -> [Device] {
        accounts.withLock { $0[account].map { Array($0.values) } ?? [] }
            .sorted { ($0.lastSeen, $1.device) > ($1.lastSeen, $0.device) }
    }

    /// How many devices `account` has.
    public func deviceCount(of account: AccountID) -> Int {
        accounts.withLock { $0[account]?.count ?? 0 }
    }

    /// The accounts that have a device, unsorted.
    public var accountsSeen: [AccountID] { accounts.withLock { Array($0.keys) } }

    /// Counts one answered request.
    func record(_ request: SyncRequest, response: SyncResponse, account: AccountID) {
        guard let stack = stack(of: request.pathWithoutQuery) else { return }
        let name = Self.deviceName(of: request)
        let codec = codecName(request.body.isEmpty ? response.contentType : request.contentType)
        let time = now()
        accounts.withLock { accounts in
            var devices = accounts[account] ?? [:]
            var device =
                devices[name]
                ?? Device(
                    device: name, stack: stack, codec: nil, lastSeen: time, lastStatus: 0, requests: 0, bytesIn: 0,
                    bytesOut: 0, userAgent: nil)
            device.stack = stack
            if let codec { device.codec = codec }
            device.lastSeen = time
            device.lastStatus = response.status
            device.requests += 1
            device.bytesIn += request.body.count
            device.bytesOut += response.body.count
            device.userAgent = request.userAgent ?? device.userAgent
            devices[name] = device
            if devices.count > maxDevicesPerAccount,
                let oldest = devices.values.min(by: { $0.lastSeen < $1.lastSeen })
            {
                devices[oldest.device] = nil
            }
            accounts[account] = devices
        }
    }

    /// The name a request's device goes by: see ``DeviceActivity``.
    static func deviceName(of request: SyncRequest) -> String {
        if let device = request.device, !device.isEmpty { return String(device.prefix(200)) }
        if let token = request.queryItems["deviceToken"], !token.isEmpty { return String(token.prefix(200)) }
        return "unnamed (\(request.userAgent.map { String($0.prefix(100)) } ?? "no user agent"))"
    }

    /// The stack of a path: the name of the longest mount it is under, or `nil`.
    private func stack(of path: Substring) -> String? {
        var best: (prefix: String, name: String)?
        for (prefix, name) in stacks where path.hasPrefix(prefix) && prefix.count > (best?.prefix.count ?? -1) {
            let rest = path.dropFirst(prefix.count)
            if rest.isEmpty || rest.hasPrefix("/") || rest.hasPrefix(":") || rest.hasPrefix("?") { best = (prefix, name) }
        }
        return best?.name
    }

    /// The name of the codec of `mediaType`, or `nil`.
    private func codecName(_ mediaType: String?) -> String? {
        guard let mediaType, let codec = codecs.codecs.first(where: { $0.accepts(mediaType: mediaType) }) else { return nil }
        return ConsoleService.displayName(of: codec.id)
    }

    private struct Middleware: SyncServiceMiddleware {
        let activity: DeviceActivity

        func intercept(
            _ request: SyncRequest, context: ServiceContext,
            next: @Sendable (SyncRequest, ServiceContext) async throws -> SyncResponse
        ) async throws -> SyncResponse {
            do {
                let response = try await next(request, context)
                activity.record(request, response: response, account: context.account)
                return response
            } catch let error as SyncServiceError {
                activity.record(request, response: error.response, account: context.account)
                throw error
            } catch {
                activity.record(request, response: SyncResponse(status: 500), account: context.account)
                throw error
            }
        }
    }
}
