/// The settings every client shares, whatever its stack: where the server is mounted, how failures
/// are retried, the clocks, and the conflict policy.
///
/// A stack's configuration holds one in ``SyncClientConfiguration`` form and adds its own settings;
/// the shared ones read and write through it by name:
///
/// ```swift
/// var configuration = AquasyncClient.Configuration(conflictPolicy: .askUser)
/// configuration.retry = .none                   // the shared part
/// configuration.packSize = 100                  // Aquasync's own
/// let endpoint = SyncEndpoint(transport: transport, codec: JSONCodec(), configuration: configuration.client)
/// ```
public struct SyncClientConfiguration: Sendable {
    /// Where the server is mounted (each stack has its default: `/deltas`, `/rest`, `/ota`).
    public var basePath: String
    /// How requests that failed for a reason that may pass are retried.
    public var retry: RetryPolicy
    /// The wall clock that stamps the device's writes (local changes and the versions a sync writes).
    public var clock: any WallClock
    /// The clock the waits between retries are slept on: a test passes a `TestClock`.
    public var sleeper: any Clock<Duration>
    /// Decides a server version that conflicts with a pending local change (docs/journal.md, rule 5).
    public var conflictPolicy: any ConflictPolicy

    /// Makes the shared settings; every setting left out keeps its default.
    /// - Parameters:
    ///   - basePath: Where the server is mounted.
    ///   - retry: How failures that may pass are retried.
    ///   - clock: The wall clock that stamps the device's writes.
    ///   - sleeper: The clock the waits between retries are slept on.
    ///   - conflictPolicy: Decides conflicts.
    public init(
        basePath: String, retry: RetryPolicy = .default, clock: any WallClock = SystemWallClock(),
        sleeper: any Clock<Duration> = ContinuousClock(), conflictPolicy: any ConflictPolicy
    ) {
        self.basePath = basePath
        self.retry = retry
        self.clock = clock
        self.sleeper = sleeper
        self.conflictPolicy = conflictPolicy
    }
}

extension SyncEndpoint {
    /// The endpoint of a client with `configuration`: its retry policy, slept on its sleeper.
    public init(transport: any SyncClientTransport, codec: any SyncCodec, configuration: SyncClientConfiguration) {
        self.init(transport: transport, codecs: CodecSet([codec]), retry: configuration.retry, sleeper: configuration.sleeper)
    }
}

/// A stack's client configuration: the shared settings in ``client``, read and written through it by
/// name, beside the stack's own.
///
/// ```swift
/// public struct Configuration: StackClientConfiguration {
///     public var client: SyncClientConfiguration     // basePath, retry, clock, sleeper, conflictPolicy
///     public var pushSize: Int                       // the stack's own
/// }
/// configuration.retry = .none                        // configuration.client.retry
/// ```
@dynamicMemberLookup
public protocol StackClientConfiguration: Sendable {
    /// The settings every client shares.
    var client: SyncClientConfiguration { get set }
}

extension StackClientConfiguration {
    /// A shared setting, by name (``SyncClientConfiguration``).
    public subscript<Value>(dynamicMember setting: WritableKeyPath<SyncClientConfiguration, Value>) -> Value {
        get { client[keyPath: setting] }
        set { client[keyPath: setting] = newValue }
    }
}
