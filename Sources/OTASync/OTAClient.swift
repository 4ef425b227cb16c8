public import SyncCore

/// The device side of OTA: syncs the device's records (``OTADeviceRecords``)
/// of several dataclasses with an ``OTAServer`` in one session.
///
/// ```swift
/// let client = OTAClient(
///     records: OTADeviceRecords(store: deviceStore, account: "ana"), deviceID: "phone-1",
///     transport: HTTPClientTransport(baseURL: server).with(CredentialsMiddleware(.basic(username: "ana", password: "…"))),
///     codec: XMLPlistCodec(), dataclasses: ["com.apple.Contacts", "com.apple.Calendars"],
///     configuration: .init(itemType: .changes))
/// let report = try await client.sync()
/// ```
///
/// What has a default is in ``Configuration``: where the server is mounted,
/// retries, the sleeper clock, and OTA's own settings.
///
/// The first message negotiates and pulls every dataclass at once: a
/// `sync-start` with the anchors the device kept and a `sync-changes` with
/// the journal's pending changes (all its records for a slow sync), split
/// into fragments under ``Configuration/maxMessageBytes``. The server's
/// changes are applied one `sync-changes` at a time, each in one transaction
/// with the checkpoint anchor it carries, so a session cut anywhere resumes
/// from there. A server version that meets a pending change is judged
/// exactly, by the change's ArchCopy, and a conflict goes to
/// ``Configuration/conflictPolicy`` (see ``SyncCore/SyncJournal``).
///
/// ## Sending
/// Messages go through a ``SyncCore/SyncEndpoint``: a message that gets no
/// answer, or a 429 or 5xx, is sent again, byte for byte, as
/// ``Configuration/retry`` says, waiting on the ``Configuration/sleeper``
/// clock (a `Retry-After` sets the wait). A message is idempotent — the
/// server recognises a repeat and answers it from its reply cache — so any
/// 5xx is retried. What is left is thrown as a ``SyncCore/SyncClientError``,
/// and so is the protocol's own refusal, an OTA status from the server:
/// code ``SyncCore/SyncClientError/Code/refused``, ``SyncCore/SyncClientError/stack``
/// `"ota"`, the status's code as ``SyncCore/SyncClientError/status`` (611 for
/// `E_LimitExceeded`) and the server's description as
/// ``SyncCore/SyncClientError/reason``.
///
/// Sessions run one at a time: ``sync()``, ``setFilter(_:for:)`` and
/// ``sendDeviceInfo()`` called together on the same client (or copies of it)
/// run one after the other.
public struct OTAClient: Sendable {
    /// How a device reaches the server, retries, and syncs its dataclasses.
    /// Every setting has a default: `OTAClient(records:deviceID:transport:codec:dataclasses:)`
    /// syncs whole records both ways with a server mounted at `/ota`, in
    /// messages of at most 1 MiB, retrying as ``SyncCore/RetryPolicy/default``.
    ///
    /// ```swift
    /// var configuration = OTAClient.Configuration(itemType: .changes)
    /// configuration.directions = ["com.apple.Calendars": .toDevice]
    /// ```
    public struct Configuration: StackClientConfiguration {
        /// The settings every client shares: base path (`/ota` by default), retries (how a message that
        /// got no answer, or a transient failure, is sent again), the sleeper and the conflict policy
        /// (``conflictPolicy``). Its wall clock is the records' (``OTADeviceRecords/clock``): the client
        /// takes it from the records it is made with. They read and write by name: `configuration.retry = .none`.
        public var client: SyncClientConfiguration
        /// Whether a fast sync sends whole records (RLD, the default) or only
        /// the fields that changed since the server last had them (FLD). FLD
        /// keeps a copy of what the server holds of each record, in the
        /// collection `ota-synced:<dataclass>` of the device's store. A slow
        /// sync always sends whole records.
        public var itemType: OTAItemType
        /// Which way each dataclass syncs; two-way for one not named. A `to_device`
        /// dataclass sends nothing (the device's edits wait for a two-way sync); a
        /// `to_server` one receives nothing.
        public var directions: [String: OTADirection]
        /// The largest message the device sends (1 MiB by default); the client
        /// takes at least 4 KiB.
        public var maxMessageBytes: Int
        /// What the device answers the server's `get deviceinfo` with.
        public var deviceInfo: [String: SyncValue]
        /// Whether to keep id maps for the next session instead of answering a final message with them
        /// (the default: a fast sync then takes one round trip; the next session delivers them first).
        public var defersIDMap: Bool
        /// Decides a conflict the device meets: a server version arriving for
        /// a record with a local change pending, when it is neither the version
        /// the change was based on nor the change itself. The default,
        /// `.serverWins`, takes the server's version (the server's policy
        /// decided first); `.askUser` keeps the conflict open in the journal
        /// until the application answers. A record the server sends as a
        /// conflict for the user (its policy deferred) is always kept open.
        public var conflictPolicy: any ConflictPolicy {
            get { client.conflictPolicy }
            set { client.conflictPolicy = newValue }
        }

        /// Makes a configuration; every setting left out keeps its default.
        /// - Parameters:
        ///   - basePath: Where the server is mounted.
        ///   - retry: How transient failures are retried.
        ///   - sleeper: The clock the waits between retries are slept on.
        ///   - itemType: Whole records (RLD) or changed fields (FLD) in a fast sync.
        ///   - directions: Which way each dataclass syncs; two-way for one not named.
        ///   - maxMessageBytes: The largest message the device sends (at least 4 KiB).
        ///   - deviceInfo: What the device answers `get deviceinfo` with.
        ///   - defersIDMap: Whether id maps wait for the next session.
        ///   - conflictPolicy: Decides the conflicts the device meets.
        public init(
            basePath: String = "/ota", retry: RetryPolicy = .default, sleeper: any Clock<Duration> = ContinuousClock(),
            itemType: OTAItemType = .records, directions: [String: OTADirection] = [:], maxMessageBytes: Int = 1 << 20,
            deviceInfo: [String: SyncValue] = ["model": "Anchorage", "software": .string(AnchorageVersion.current)],
            defersIDMap: Bool = true, conflictPolicy: any ConflictPolicy = .serverWins
        ) {
            self.client = SyncClientConfiguration(basePath: basePath, retry: retry, sleeper: sleeper, conflictPolicy: conflictPolicy)
            self.itemType = itemType
            self.directions = directions
            self.maxMessageBytes = maxMessageBytes
            self.deviceInfo = deviceInfo
            self.defersIDMap = defersIDMap
        }
    }

    /// The device's records.
    public let records: OTADeviceRecords
    /// The device's identifier (`deviceid`).
    public let deviceID: String
    /// Carries messages to the server.
    public let transport: any SyncClientTransport
    /// The codec messages travel in.
    public let codec: any SyncCodec
    /// The dataclasses to sync, in this order (never the journal's collection, `anchorage.journal`,
    /// nor FLD's `ota-synced:` copies).
    public let dataclasses: [String]
    /// Where the server is mounted, retries, and OTA's own settings
    /// (``Configuration/maxMessageBytes`` as the client uses it: at least 4 KiB).
    public let configuration: Configuration
    /// Sends the messages, retrying transient failures.
    let endpoint: SyncEndpoint
    /// Lets one session run at a time.
    package let syncGate = SyncGate()

    /// Makes a client.
    /// - Parameters:
    ///   - records: The device's records.
    ///   - deviceID: The device's identifier (`deviceid`).
    ///   - transport: Carries messages to the server (add credentials with a middleware).
    ///   - codec: The codec messages travel in.
    ///   - dataclasses: The dataclasses to sync, in this order.
    ///   - configuration: Where the server is mounted, retries, and OTA's own settings.
    public init(
        records: OTADeviceRecords, deviceID: String, transport: any SyncClientTransport, codec: any SyncCodec,
        dataclasses: [String], configuration: Configuration = Configuration()
    ) {
        self.records = records
        self.deviceID = deviceID
        self.transport = transport
        self.codec = codec
        self.dataclasses = dataclasses.filter(OTAClientState.isDataclass)
        var configuration = configuration
        configuration.maxMessageBytes = max(4_096, configuration.maxMessageBytes)
        configuration.client.clock = records.clock
        self.configuration = configuration
        self.endpoint = SyncEndpoint(transport: transport, codec: codec, configuration: configuration.client)
    }

    /// Runs one session.
    /// - Returns: what travelled and how.
    /// - Throws: ``SyncCore/SyncClientError``: ``SyncCore/SyncClientError/Code/refused`` (stack `"ota"`,
    ///   the OTA status) when the server refuses a message or a dataclass; another code when a message
    ///   cannot be delivered or its answer read.
    @discardableResult
    public func sync() async throws -> OTASyncReport {
        try await syncGate.run {
            var session = OTAClientSession(client: self)
            return try await session.run()
        }
    }
}

extension OTAClient {
    /// Tells the server what the device wants of a dataclass (`put dataclass/<name>/filter`), or
    /// removes the filter (`delete`) when `filter` is nil. The next sync of the dataclass is slow,
    /// so the device receives what the filter now admits and drops what it no longer does.
    /// - Throws: ``SyncCore/SyncClientError``: ``SyncCore/SyncClientError/Code/refused`` with the server's
    ///   OTA status when it refuses; another code when the message cannot be delivered or its answer read.
    public func setFilter(_ filter: OTADataclassFilter?, for dataclass: String) async throws {
        var params: [String: SyncValue] = ["uri": .string(OTAResource.filter(dataclass: dataclass).uri)]
        if let filter { params["value"] = .dictionary(filter.value) }
        try await syncGate.run {
            var session = OTAClientSession(client: self)
            try await session.runAlone(OTACommand(filter == nil ? .delete : .put, sequence: 1, params: params))
        }
    }
}

extension OTAClient {
    /// Tells the server the device's info changed (`put deviceinfo` with ``Configuration/deviceInfo``).
    /// - Throws: ``SyncCore/SyncClientError``: ``SyncCore/SyncClientError/Code/refused`` with the server's
    ///   OTA status when it refuses; another code when the message cannot be delivered or its answer read.
    public func sendDeviceInfo() async throws {
        try await syncGate.run {
            var session = OTAClientSession(client: self)
            try await session.runAlone(
                OTACommand(.put, sequence: 1, params: ["uri": .string(OTAResource.deviceInfo.uri), "value": .dictionary(configuration.deviceInfo)]))
        }
    }
}

/// What one OTA session did.
public struct OTASyncReport: Sendable, Hashable {
    /// HTTP round trips (messages sent).
    public var roundTrips = 0
    /// Items the device sent.
    public var sentItems = 0
    /// Items the server sent and the device applied.
    public var receivedItems = 0
    /// The mode each dataclass synced in.
    public var modes: [String: OTASyncMode] = [:]
    /// Conflicts the device met in this sync: server versions that moved away from
    /// the version a pending local change was based on (decided by the policy, or left open).
    public var conflicts = 0
    /// Conflicts waiting for the application's answer after the sync, in the synced dataclasses
    /// (``SyncCore/SyncStore/openConflicts(for:)`` lists them).
    public var openConflicts = 0
    /// Local changes the server refused for good, by record key (the dataclass and the LUID):
    /// the reason. They left the journal; the device keeps its record as it is.
    public var refused: [RecordKey: String] = [:]
}

extension SyncClientError {
    /// The stack name OTA's errors carry (``SyncCore/SyncClientError/stack``).
    static let otaStack = "ota"

    /// The server's OTA status refusing a message (in its header) or a dataclass's command, as the
    /// one client error: ``SyncCore/SyncClientError/Code/refused`` with the OTA status's code as
    /// ``SyncCore/SyncClientError/status`` and its description (or name) as ``SyncCore/SyncClientError/reason``;
    /// ``SyncCore/SyncClientError/Code/serverFailed`` for the 7xx statuses that say the server cannot
    /// serve now (`E_ServiceBusy`, `E_ServiceUnavailable`, `E_ServiceError`, `E_RetryLater`), which may pass.
    /// The message is `dataclass: E_Name (code) [param]: description`.
    static func ota(_ result: OTAResult, dataclass: String? = nil) -> SyncClientError {
        let mayPass: Set<OTAStatus> = [.serviceBusy, .serviceUnavailable, .serviceError, .retryLater]
        return SyncClientError(
            mayPass.contains(result.status) ? .serverFailed : .refused, status: result.status.code,
            "\(dataclass.map { "\($0): " } ?? "")\(result)", stack: otaStack, reason: result.detail ?? result.status.name)
    }

    /// A session the server's answers do not carry on (no answer to a command, a session that does
    /// not end): ``SyncCore/SyncClientError/Code/invalidResponse`` from OTA, without a status.
    static func ota(invalid reason: String) -> SyncClientError {
        SyncClientError(.invalidResponse, reason, stack: otaStack, reason: reason)
    }
}
