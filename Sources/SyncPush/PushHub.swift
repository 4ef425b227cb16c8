#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// The push server's state: each device's registration, its notification
/// numbers, its queue of the last notifications, and its connection.
///
/// Every notification goes into the device's queue (the last
/// ``PushServer/Configuration/queueLength``) whether it is connected or not,
/// so a device that comes back — or whose connection was cut in the middle
/// of a message — gets what it missed after its `after`. The queue proves
/// nothing was missed only from ``Device/provenAfter`` on: below that are
/// notifications dropped from the queue, or numbers of an earlier server.
package actor PushHub {
    /// A device of an account.
    package struct Key: Hashable, Sendable {
        package var account: AccountID
        package var device: String
        package init(account: AccountID, device: String) {
            self.account = account
            self.device = device
        }
    }

    /// One queued notification.
    struct Entry: Sendable {
        var seq: UInt64
        var token: String
    }

    /// What the hub knows of a device.
    struct Device: Sendable {
        /// A token per collection with push.
        var tokens: [CollectionID: String] = [:]
        /// The latest notification number given.
        var seq: UInt64
        /// The lowest `after` the queue can answer for: everything after it is in the queue.
        var provenAfter: UInt64
        /// The last notifications, oldest first.
        var queue: [Entry] = []
        /// The connection notifications go to now.
        var connection: Connection?
        /// When the device was last connected or registered (for evicting the least recent).
        var lastSeen: UInt64 = 0
    }

    /// A device's open stream.
    struct Connection: Sendable {
        var id: UInt64
        var sink: any PushSink
    }

    let configuration: PushServer.Configuration
    private var devices: [Key: Device] = [:]
    private var devicesByAccount: [AccountID: Set<String>] = [:]
    private var nextConnectionID: UInt64 = 1
    private var tick: UInt64 = 0

    init(configuration: PushServer.Configuration) {
        self.configuration = configuration
    }

    // MARK: Registration

    /// Registers `collections` for a device and returns its tokens and the collections to poll.
    func register(_ key: Key, collections: [CollectionID]) throws(SyncServiceError) -> PushRegistrationAnswer {
        guard DeviceToken.isValid(key.device) else {
            throw .badRequest("deviceToken must be 1 to \(DeviceToken.maxLength) characters of A-Z a-z 0-9 . _ : -")
        }
        guard collections.count <= configuration.maxCollectionsPerDevice else {
            throw .init(status: 413, message: "a device may monitor at most \(configuration.maxCollectionsPerDevice) collections")
        }
        if let long = collections.first(where: { $0.rawValue.isEmpty || $0.rawValue.utf8.count > 1_024 }) {
            throw .badRequest("collection names must be 1 to 1024 bytes; '\(long.rawValue.prefix(40))…' is not")
        }
        if devices[key] == nil { try makeRoom(in: key.account) }
        tick += 1
        var device = devices[key] ?? Self.fresh(at: newBase())
        var tokens: [CollectionID: String] = [:]
        var poll: [CollectionID] = []
        for collection in Set(collections).sorted() {
            if configuration.hasPush(collection) {
                tokens[collection] = device.tokens[collection] ?? Self.newToken()
            } else {
                poll.append(collection)
            }
        }
        device.tokens = tokens
        device.lastSeen = tick
        devices[key] = device
        devicesByAccount[key.account, default: []].insert(key.device)
        return PushRegistrationAnswer(
            tokens: Dictionary(uniqueKeysWithValues: tokens.map { ($0.key.rawValue, $0.value) }), poll: poll,
            pollInterval: Int(configuration.pollInterval.components.seconds))
    }

    /// Whether the device is registered.
    func isRegistered(_ key: Key) -> Bool { devices[key] != nil }

    /// Evicts the least recently seen unconnected device of a full account.
    private func makeRoom(in account: AccountID) throws(SyncServiceError) {
        let names = devicesByAccount[account] ?? []
        guard names.count >= configuration.maxDevicesPerAccount else { return }
        let idle = names.compactMap { name in devices[Key(account: account, device: name)].flatMap { $0.connection == nil ? (name, $0.lastSeen) : nil } }
        guard let oldest = idle.min(by: { $0.1 < $1.1 }) else {
            throw .init(status: 503, message: "account \(account) has \(names.count) devices connected, the most this server keeps")
        }
        devices[Key(account: account, device: oldest.0)] = nil
        devicesByAccount[account]?.remove(oldest.0)
    }

    // MARK: Connections

    /// Opens the device's stream after notification `after`: first what it
    /// missed (or a "sync everything" message when that cannot be proven),
    /// then every new notification, all handed to `sink`. A connection the
    /// device had is closed.
    /// - Returns: the connection's id, or `nil` when the device is not registered.
    func connect(_ key: Key, after: UInt64, sink: any PushSink) -> UInt64? {
        guard var device = devices[key] else { return nil }
        device.connection?.sink.finish()
        let id = nextConnectionID
        nextConnectionID += 1
        tick += 1
        device.lastSeen = tick
        if after >= device.provenAfter && after <= device.seq {
            // The queue holds everything after `after`: replay it, the first flagged retained.
            for (index, entry) in device.queue.filter({ $0.seq > after }).enumerated() {
                _ = sink.send(PushNotification(seq: entry.seq, token: entry.token, retained: index == 0))
            }
        } else {
            // Notifications were dropped, or `after` is a number this server never gave.
            device.seq = max(device.seq, after) + 1
            device.provenAfter = device.seq
            device.queue.removeAll()
            _ = sink.send(PushNotification(seq: device.seq, token: nil, retained: true))
        }
        device.connection = Connection(id: id, sink: sink)
        devices[key] = device
        return id
    }

    /// Forgets the connection `id` of a device, if it is still the device's.
    func disconnect(_ key: Key, id: UInt64) {
        guard devices[key]?.connection?.id == id else { return }
        devices[key]?.connection?.sink.finish()
        devices[key]?.connection = nil
    }

    /// Closes every device's stream: the server stops, and its devices reconnect (to it again, or another).
    package func disconnectAll() {
        for key in devices.keys where devices[key]?.connection != nil {
            devices[key]?.connection?.sink.finish()
            devices[key]?.connection = nil
        }
    }

    // MARK: Notifying

    /// How many devices ``announce(_:)`` notifies between two turns for other work.
    static let fanOutBatch = 128

    /// Queues (and sends to connected devices) a notification for each
    /// device of the account that monitors a changed collection, except the writer.
    ///
    /// Every ``fanOutBatch`` devices it waits until the streams have taken what was sent
    /// (``PushSink/drained()``): thousands of notifications handed over at once would queue
    /// ahead of everything else the server does, the writer's own answer first.
    /// - Returns: How many notifications were made.
    @discardableResult
    func announce(_ change: StoreChange) async -> Int {
        guard let names = devicesByAccount[change.account] else { return 0 }
        var made = 0
        var visited = 0
        var sent: [ObjectIdentifier: any PushSink] = [:]
        for name in names where name != change.device {
            visited += 1
            if visited % Self.fanOutBatch == 0 {
                for sink in sent.values { await sink.drained() }
                sent.removeAll(keepingCapacity: true)
                await Task.yield()
            }
            let key = Key(account: change.account, device: name)
            guard var device = devices[key] else { continue }
            let tokens: [String]
            if let collections = change.collections {
                tokens = collections.compactMap { device.tokens[$0] }.sorted()
            } else {
                tokens = device.tokens.values.sorted()
            }
            guard !tokens.isEmpty else { continue }
            for token in tokens {
                enqueue(token, for: &device)
                made += 1
            }
            if let sink = device.connection?.sink, let queue = sink.queueIdentity { sent[queue] = sink }
            devices[key] = device
        }
        return made
    }

    /// Queues (and sends, when connected) a notification of `token` for one device, when the
    /// device is registered and `token` is one of its tokens (a mail server's notification).
    /// - Returns: Whether a notification was made.
    @discardableResult
    func notify(_ key: Key, token: String) -> Bool {
        guard var device = devices[key], device.tokens.values.contains(token) else { return false }
        enqueue(token, for: &device)
        devices[key] = device
        return true
    }

    /// Adds a notification of `token` to the device's queue and its stream.
    private func enqueue(_ token: String, for device: inout Device) {
        device.seq += 1
        device.queue.append(Entry(seq: device.seq, token: token))
        if device.queue.count > configuration.queueLength {
            let dropped = device.queue.removeFirst()
            device.provenAfter = max(device.provenAfter, dropped.seq)
        }
        if let connection = device.connection,
            !connection.sink.send(PushNotification(seq: device.seq, token: token, retained: false))
        {
            // The device does not read fast enough: it reconnects and gets the queue.
            connection.sink.finish()
            device.connection = nil
        }
    }

    /// Tells every device that notifications may have been lost (the store stopped announcing for a while):
    /// the next message each gets says "sync everything".
    func lostNotifications() {
        for (key, var device) in devices {
            device.seq += 1
            device.provenAfter = device.seq
            device.queue.removeAll()
            if let connection = device.connection {
                _ = connection.sink.send(PushNotification(seq: device.seq, token: nil, retained: true))
            }
            devices[key] = device
        }
    }

    /// How many notifications a device's queue holds now (0 for an unknown device).
    package func queued(_ key: Key) -> Int { devices[key]?.queue.count ?? 0 }

    /// How many devices are registered and how many connected.
    /// What the hub knows of each registered device of `account`, sorted by device.
    func statuses(of account: AccountID) -> [PushDeviceStatus] {
        (devicesByAccount[account] ?? []).sorted().compactMap { name in
            devices[Key(account: account, device: name)].map { device in
                PushDeviceStatus(
                    device: name, collections: device.tokens.keys.sorted(), isConnected: device.connection != nil,
                    queued: device.queue.count)
            }
        }
    }

    func counts() -> (registered: Int, connected: Int) {
        (devices.count, devices.values.count { $0.connection != nil })
    }

    // MARK: Helpers

    /// A new device's numbers start at the time in milliseconds, above any an earlier server
    /// process gave it (so an old `after` is never mistaken for one this server can answer).
    private func newBase() -> UInt64 {
        UInt64(max(0, configuration.clock.now().timeIntervalSince1970 * 1_000))
    }

    private static func fresh(at base: UInt64) -> Device {
        Device(seq: base, provenAfter: base)
    }

    private static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

/// Where a connected device's notifications go: its push stream.
protocol PushSink: Sendable {
    /// Hands one notification over to the stream.
    /// - Returns: `false` when the device reads too slowly to take it; the hub then ends the stream.
    func send(_ notification: PushNotification) -> Bool
    /// Ends the stream: the device reconnects and gets its queue.
    func finish()
    /// What the streams that share this one's queue of work have in common (their event loop), or `nil`.
    var queueIdentity: ObjectIdentifier? { get }
    /// Returns once everything sent to this stream so far has been taken from its queue of work.
    func drained() async
}
