import AppSync
import Aquasync
import ArgumentParser
import Foundation
import Hummingbird
import Logging
import OTASync
import SyncConsole
import SyncCore
import SyncHTTP
import SyncHTTPServer
import SyncPush

/// `anchorage serve`: runs the sync server over HTTP or HTTPS.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a sync server over HTTP or HTTPS.",
        discussion: """
            Mounts every stack on one HTTP server: Aquasync at /deltas, appSync at /rest (object types \
            from --appsync-type) and OTA sync at /ota (dataclasses from --ota-dataclass; messages up to \
            --ota-max-message-bytes).

            The push server is at /push: a device registers the collections it monitors (POST \
            /push/register) and hears on a WebSocket (GET /push/stream) when another device's commit \
            changes one of them; `anchorage sync --watch` is such a device. Several servers on one \
            PostgreSQL database each hear every server's commits. See docs/push.md.

            Requests authenticate with HTTP Basic or a bearer token from the users file (see \
            `anchorage users`). The server reads the file again whenever it changes, so accounts added \
            while it runs work at once; until the file has an account, every request is answered 401.

            GET /health answers 200 while the server runs, GET /ready 200 when the store answers a \
            trivial read (503 otherwise), and GET /metrics the Prometheus text exposition (requests by \
            stack and status, durations, records received and sent, conflicts, store latency; turn it \
            off with --no-metrics); all three without credentials. Every answer carries X-Request-ID \
            (the client's when it sends a sane one), and so does every log line about that request. \
            Log lines go to standard error, as text or, with --log-format json, one JSON object a line.

            Limits against abuse: after --login-failures failed logins for one account (or \
            --login-failures-per-address from one address) its requests get 429 with Retry-After, \
            without the password being checked, for 1 minute, doubling with each further failure up to \
            15 minutes; forgotten after a success, or 15 minutes without a failure after the last lock. \
            --quota-records and --quota-bytes hold each account to a size (507; OTA E_LimitExceeded); \
            --max-record-bytes refuses one too-large record for good (the device drops its change and \
            reports it) while the rest of the request goes through; \
            --max-connections and --request-timeout cap the work in service (503 with Retry-After). \
            `anchorage users revoke NAME` removes an account's bearer tokens at once.

            Limits on connections: at start the server raises its descriptor limit to the hard limit and \
            keeps at most --max-open-connections open (by default that limit less a reserve), so clients \
            cannot take the descriptors the store and the runtime need; further connections wait in the \
            kernel's backlog. A request head must arrive within --header-timeout, a body within \
            --body-timeout plus a second for every --body-min-rate bytes (408 and the connection closed), \
            a TLS handshake within --tls-handshake-timeout; a connection idle for --keep-alive-timeout \
            between requests is closed, and so is a push stream that does not answer a ping by the next \
            one (--push-ping-interval). See docs/deploying.md.

            With --tls-cert and --tls-key (PEM files: the server's certificate, then any intermediate \
            certificates; and its unencrypted private key) the server speaks HTTPS, and prints an \
            https:// address. A certificate or key that is missing, unreadable or not a pair stops the \
            server before it listens (exit status 66 when a file cannot be read, 65 when its contents are \
            wrong). Without them it speaks plain HTTP, which is fine on 127.0.0.1; on any other address \
            it prints a warning, since passwords and records would cross the network readable. See \
            docs/deploying.md for making a certificate and trusting it on devices (`anchorage sync --ca-file`).

            With --console the server also serves the operator console at /console: a web page showing \
            accounts, their devices, collections and records, and the live load, read-only, for accounts the \
            users file marks as operators (`anchorage users add NAME --operator`; others get 403). See \
            docs/console.md.

            Stops on SIGINT or SIGTERM after finishing the requests in flight.
            """
    )

    @Option(help: "The address to listen on (0.0.0.0 for every interface: use TLS there).")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one and prints it).")
    var port = 8080

    @Option(help: "Where records live: sqlite:PATH, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or memory.")
    var store = StoreOption(argument: "sqlite:anchorage-server.sqlite")!

    @Option(
        name: .customLong("postgres-replica"),
        help: """
            A hot standby of the --store PostgreSQL database (postgres://USER@HOST[:PORT]/DATABASE) that answers \
            pulls once it has replayed the latest commits (waiting at most 100 ms, else the primary answers).
            """)
    var postgresReplica: PostgresLocation?

    @Option(
        name: .customLong("postgres-connections"),
        help: """
            The most connections to the --store PostgreSQL database, one of them listening for other servers' commits \
            (and as many to --postgres-replica). By default twice this machine's cores plus two: more connections \
            than the database has cores to run them only wait inside it.
            """)
    var postgresConnections: Int?

    @Option(help: "The users file (create it with `anchorage users add`).")
    var users = "users.txt"

    @Option(
        name: .customLong("appsync-type"),
        help: "An appSync object type as NAME or NAME:FIELD+FIELD (its primary key; 'pk' by default). Repeatable.")
    var appSyncTypes: [String] = ["booking"]

    @Option(name: .customLong("ota-dataclass"), help: "An OTA dataclass the server syncs, such as com.apple.Contacts. Repeatable.")
    var otaDataclasses: [String] = OTADefaults.dataclasses

    @Option(name: .customLong("ota-max-message-bytes"), help: "OTA: the largest message the server sends or accepts, in encoded bytes.")
    var otaMaxMessageBytes = 1 << 20

    /// Who decides an OTA conflict: the server's mingle, or the device's user.
    enum OTAConflicts: String, ExpressibleByArgument, CaseIterable {
        case server, device

        var policy: any ConflictPolicy {
            switch self {
            case .server: NewestWinsPolicy()
            case .device: AskUserPolicy()
            }
        }
    }

    @Option(
        name: .customLong("ota-conflicts"),
        help: """
            OTA: who decides a conflict: server (the mingle keeps the version of the latest sync) or device \
            (the device keeps both for its user: `anchorage conflicts`).
            """)
    var otaConflicts: OTAConflicts = .server

    @Option(help: "Push: how many notifications the server keeps for a device while it is away.")
    var pushQueueLength = Defaults.push.queueLength

    @Option(help: "Push: the most devices one account may register; one more forgets the least recently seen unconnected device.")
    var pushMaxDevices = Defaults.push.maxDevicesPerAccount

    @Option(
        name: .customLong("push-mail-account"),
        help: """
            Push: an account a mail server's hook posts mailbox changes as (POST /push/mail; docs/mail.md). \
            Repeat for several; no account may post there by default.
            """)
    var pushMailAccounts: [String] = []

    @Option(help: "The largest request body accepted, in bytes: as it arrives, and decoded when it is compressed (gzip, deflate).")
    var maxRequestBytes = Defaults.server.maxRequestBytes

    @Option(help: "The smallest answer body sent compressed (gzip, else deflate) to a client whose Accept-Encoding takes it (0: never).")
    var compressAbove = Defaults.server.compressAbove ?? 0

    @Option(help: "zlib's level for compressed answers: 1, the fastest, to 9, the smallest (docs/deploying.md: what each costs).")
    var compressionLevel = Defaults.server.compressionLevel

    @Option(help: "The most bytes one live record's fields may take (as stored); a larger record is refused on its own, for good, and the others of its request go through. No limit by default.")
    var maxRecordBytes: Int?

    @Option(help: "The most live records one account may hold; an upload that would pass it is refused (HTTP 507, OTA E_LimitExceeded). No limit by default.")
    var quotaRecords: Int?

    @Option(help: "The most bytes of live records one account may hold (collection, id and fields as stored). No limit by default.")
    var quotaBytes: Int?

    @Option(help: "The most requests served at once; more are answered 503 with Retry-After.")
    var maxConnections = 256

    @Option(help: "The longest a request may take to serve, in seconds (0: no limit); a slower one is answered 503 and its work cancelled.")
    var requestTimeout = Int(Serve.seconds(Defaults.server.requestTimeout))

    @Option(
        help: """
            The most connections open at once (HTTP, push streams, TLS handshakes); further ones wait in the kernel's \
            backlog until one closes. By default the descriptor limit less a reserve for the store and logs.
            """)
    var maxOpenConnections: Int?

    @Option(help: "Seconds a request head may take to arrive, from the connection's start or the next request's first byte (0: no limit).")
    var headerTimeout = Serve.seconds(Defaults.connections.headerTimeout)

    @Option(help: "Seconds a request body may take beyond what its bytes earn at --body-min-rate (0: no limit).")
    var bodyTimeout = Serve.seconds(Defaults.connections.bodyTimeout)

    @Option(help: "Bytes a second that earn a request body one more second (0: the body has --body-timeout in all).")
    var bodyMinRate = Defaults.connections.bodyMinimumRate

    @Option(help: "Seconds a TLS handshake may take (0: no limit).")
    var tlsHandshakeTimeout = Serve.seconds(Defaults.connections.tlsHandshakeTimeout)

    @Option(help: "Seconds a connection may stay idle between requests (0: no limit).")
    var keepAliveTimeout = Serve.seconds(Defaults.connections.keepAliveTimeout)

    @Option(help: "Seconds between the pings of a push stream; a stream that has not answered one by the next is closed.")
    var pushPingInterval = Serve.seconds(Defaults.push.streamPingInterval)

    @Option(help: "Failed logins for one account that lock it for a while (429 with Retry-After; 0: no limit).")
    var loginFailures = Defaults.logins.maxFailuresPerAccount ?? 0

    @Option(help: "Failed logins from one client address that lock it (0: no limit; use 0 behind a reverse proxy).")
    var loginFailuresPerAddress = Defaults.logins.maxFailuresPerAddress ?? 0

    @Option(
        name: .customLong("tls-cert"),
        help: "Serve HTTPS with this PEM certificate chain (the server's certificate first); needs --tls-key.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    @Option(help: "The log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "How log lines are written to standard error: text, or json (one object a line: time, level, message, label, metadata).")
    var logFormat: LogFormat = .text

    @Flag(inversion: .prefixedNo, help: "Serve GET /metrics (Prometheus text format, without credentials).")
    var metrics = true

    @Flag(help: "Serve the operator console at /console (operators only: anchorage users operator NAME). See docs/console.md.")
    var console = false

    /// Refuses an OTA message limit the server would silently raise.
    func validate() throws {
        guard otaMaxMessageBytes >= 4_096 else { throw ValidationError("--ota-max-message-bytes must be at least 4096") }
        if let maxRecordBytes, maxRecordBytes < 1 { throw ValidationError("--max-record-bytes must be at least 1") }
        if let quotaRecords, quotaRecords < 0 { throw ValidationError("--quota-records must not be negative") }
        if let quotaBytes, quotaBytes < 0 { throw ValidationError("--quota-bytes must not be negative") }
        if let postgresConnections, postgresConnections < 2 {
            throw ValidationError("--postgres-connections must be at least 2 (one listens for other servers' commits)")
        }
        guard pushQueueLength >= 1 else { throw ValidationError("--push-queue-length must be at least 1") }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        if let maxOpenConnections, maxOpenConnections < 1 { throw ValidationError("--max-open-connections must be at least 1") }
        for (name, seconds) in [
            ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout),
            ("--tls-handshake-timeout", tlsHandshakeTimeout), ("--keep-alive-timeout", keepAliveTimeout),
        ] where !(seconds >= 0 && seconds.isFinite) {
            throw ValidationError("\(name) must be a number of seconds, not negative (0: no limit)")
        }
        guard compressAbove >= 0 else { throw ValidationError("--compress-above must not be negative (0: never compress)") }
        guard (1...9).contains(compressionLevel) else { throw ValidationError("--compression-level must be 1 to 9") }
        guard bodyMinRate >= 0 else { throw ValidationError("--body-min-rate must not be negative") }
        guard pushPingInterval > 0, pushPingInterval.isFinite else {
            throw ValidationError("--push-ping-interval must be a positive number of seconds")
        }
        guard requestTimeout >= 0 else { throw ValidationError("--request-timeout must not be negative (0: no limit)") }
        guard loginFailures >= 0, loginFailuresPerAddress >= 0 else {
            throw ValidationError("--login-failures and --login-failures-per-address must not be negative (0: no limit)")
        }
        guard (tlsCertificate == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together: pass both to serve HTTPS, or neither for plain HTTP")
        }
    }

    func run() async throws {
        let registry = Self.bootstrapObservability(format: logFormat, level: logLevel)
        var logger = Logger(label: "anchorage.serve")
        logger.logLevel = logLevel
        let tls = try loadTLS()
        if tls == nil && !HTTPSyncServer.Configuration(host: host).isLoopbackOnly {
            FileHandle.standardError.write(Data(
                "anchorage: warning: serving plain HTTP on \(host), which other machines can reach: passwords, tokens and records cross the network unencrypted; pass --tls-cert and --tls-key, or put a TLS proxy in front\n".utf8))
        }
        let authenticator: UsersFileAuthenticator
        do {
            authenticator = try UsersFileAuthenticator(contentsOf: URL(fileURLWithPath: users)) { [users, logger] error in
                logger.error("users file \(users) changed but cannot be read (\(error)); the accounts read before stay in force")
            }
        } catch {
            throw failure(
                "the users file \(users) \(error.line > 0 ? "" : "cannot be read: ")\(error); fix it or name another with --users",
                code: 66)
        }
        if !authenticator.hasAccounts {
            FileHandle.standardError.write(Data(
                "anchorage: no accounts in \(users) yet, so every request is refused (401); add one while the server runs: echo PASSWORD | anchorage users add NAME --file \(users)\n".utf8))
        }
        let connections = connectionLimits(logger: logger)
        try await store.withStore(readReplica: postgresReplica, postgresConnections: postgresConnections) { unmeteredStore in
            let meteredStore = MeteredStore(unmeteredStore)
            let syncStore: any SyncStore =
                quotaRecords == nil && quotaBytes == nil
                ? meteredStore
                : QuotaStore(base: meteredStore, limits: .init(records: quotaRecords, bytes: quotaBytes))
            let validation = maxRecordBytes.map(RecordValidation.maximumSize) ?? .acceptAll
            let router = ServiceRouter()
                .mounting(AquasyncServer(store: syncStore, codecs: CodecChoice.allCodecs, validation: validation), at: "/deltas")
                .mounting(
                    AppSyncServer(
                        store: syncStore, codecs: CodecChoice.allCodecs, types: try appSyncTypes.map(AppSyncObjectType.init(argument:)),
                        validation: validation),
                    at: "/rest")
                .mounting(
                    OTAServer(
                        store: syncStore, codecs: CodecChoice.allCodecs, dataclasses: Set(otaDataclasses),
                        conflictPolicy: otaConflicts.policy, validation: validation, maxMessageBytes: otaMaxMessageBytes),
                    at: "/ota")
            guard let notifyingStore = unmeteredStore as? any ChangeNotifyingStore else {
                throw failure("the store \(store) does not announce its commits, which the push server needs", code: 70)
            }
            var pushConfiguration = PushServer.Configuration(queueLength: pushQueueLength)
            pushConfiguration.maxDevicesPerAccount = max(1, pushMaxDevices)
            pushConfiguration.mailServers = Set(pushMailAccounts.map { AccountID($0) })
            pushConfiguration.streamPingInterval = .seconds(pushPingInterval)
            let push = PushServer(
                store: notifyingStore, codecs: CodecChoice.allCodecs, configuration: pushConfiguration, logger: logger)
            let routed = router.mounting(push, at: "/push")
            var service: any SyncService = routed.with(push.writerMiddleware)
            var consoleService: ConsoleService?
            let loadHistory = console ? LoadHistory() : nil
            if let loadHistory {
                guard let browsable = unmeteredStore as? any BrowsableStore else {
                    throw failure("the store \(store) cannot be browsed, which the console needs", code: 70)
                }
                let activity = DeviceActivity(codecs: CodecChoice.allCodecs)
                let consoleAPI = ConsoleService(
                    store: browsable, codecs: CodecChoice.allCodecs, activity: activity, history: loadHistory, push: push,
                    users: authenticator)
                consoleService = consoleAPI
                service = routed.mounting(consoleAPI, at: "/console/api").with(push.writerMiddleware).with(activity.middleware)
            }
            let server = HTTPSyncServer(
                service: service, authenticator: authenticator,
                configuration: .init(
                    host: host, port: port, maxRequestBytes: maxRequestBytes, maxConcurrentRequests: maxConnections,
                    requestTimeout: Self.limit(seconds: Double(requestTimeout)),
                    loginThrottle: loginFailures == 0 && loginFailuresPerAddress == 0
                        ? nil
                        : LoginThrottle.Policy(
                            maxFailuresPerAccount: loginFailures == 0 ? nil : loginFailures,
                            maxFailuresPerAddress: loginFailuresPerAddress == 0 ? nil : loginFailuresPerAddress),
                    tls: tls, connections: connections, compressAbove: compressAbove == 0 ? nil : compressAbove,
                    compressionLevel: compressionLevel),
                logger: logger,
                onRunning: { [host, store, consoleService] port in
                    FileHandle.standardOutput.write(Data("anchorage \(AnchorageVersion.current) serving on \(tls == nil ? "http" : "https")://\(host):\(port) (store \(store); Aquasync at /deltas, appSync at /rest, OTA at /ota, push at /push\(consoleService == nil ? "" : ", console at /console"))\n".utf8))
                },
                observability: ServerObservability(
                    readiness: ServerObservability.storeReadiness(unmeteredStore), prometheus: metrics ? registry : nil,
                    loadHistory: loadHistory),
                pages: consoleService == nil ? [] : ConsoleService.pages)
            try await PushHTTPServer(server, push: push, companions: consoleService.map { [$0] } ?? []).runService()
        }
    }
}

extension Serve {
    /// Where the options' defaults come from: the library's own, so that `anchorage serve` runs like a server
    /// made in code with the default settings, and a default changed there changes here too.
    enum Defaults {
        /// The server's: body size, requests at once, request time, compression.
        static let server = HTTPSyncServer.Configuration()
        /// The connections': the time a request head, a body, a TLS handshake may take, and the idle time.
        static let connections = ConnectionLimits.standard
        /// How many failed logins lock an account or an address.
        static let logins = LoginThrottle.Policy.standard
        /// The push server's: the queue length and the stream's ping interval.
        static let push = PushServer.Configuration()
    }

    /// `limit` in seconds, as an option spells it: 0 for no limit.
    static func seconds(_ limit: Duration?) -> Double {
        guard let (seconds, attoseconds) = limit?.components else { return 0 }
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The limit an option's `seconds` spells: `nil` (no limit) for 0.
    static func limit(seconds: Double) -> Duration? { seconds == 0 ? nil : .seconds(seconds) }
}

extension Serve {
    /// The certificate and key from --tls-cert and --tls-key, read and checked
    /// before the server listens; `nil` without them.
    /// - Throws: one line and exit status 66 when a file cannot be read, 65 when
    ///   it holds no certificate or key or the key does not belong to the certificate.
    func loadTLS() throws -> HTTPSyncServer.TLS? {
        guard let tlsCertificate, let tlsKey else { return nil }
        do {
            return try HTTPSyncServer.TLS(certificateChainFile: tlsCertificate, privateKeyFile: tlsKey)
        } catch {
            throw failure("cannot serve HTTPS: \(error.message)", code: error.code == .unreadable ? 66 : 65)
        }
    }
}

extension Serve {
    /// The connection limits of the options. Raises the process's descriptor limit to its hard limit
    /// first, and caps open connections below it unless --max-open-connections says otherwise.
    func connectionLimits(logger: Logger) -> ConnectionLimits {
        var limits = ConnectionLimits(
            headerTimeout: Self.limit(seconds: headerTimeout), bodyTimeout: Self.limit(seconds: bodyTimeout),
            bodyMinimumRate: bodyMinRate, tlsHandshakeTimeout: Self.limit(seconds: tlsHandshakeTimeout),
            keepAliveTimeout: Self.limit(seconds: keepAliveTimeout))
        let descriptors = DescriptorLimit.raiseToHardLimit()
        let cap = descriptors.map(DescriptorLimit.connectionCap(limit:))
        limits.maxOpenConnections = maxOpenConnections ?? cap
        if let descriptors, let cap, let chosen = maxOpenConnections, chosen > cap {
            logger.warning(
                "--max-open-connections \(chosen) leaves less than the reserve of the descriptor limit (\(descriptors)); clients may take the descriptors the server needs")
        }
        logger.info(
            "descriptor limit \(descriptors.map(String.init) ?? "unknown"); at most \(limits.maxOpenConnections.map(String.init) ?? "any number of") connections open at once")
        return limits
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

extension AppSyncObjectType {
    /// Reads `NAME` or `NAME:FIELD+FIELD` from the command line.
    init(argument: String) throws {
        let parts = argument.split(separator: ":", maxSplits: 1).map(String.init)
        guard let name = parts.first, !name.isEmpty else { throw ValidationError("'\(argument)' is not NAME or NAME:FIELD+FIELD") }
        let key = parts.count == 2 ? parts[1].split(separator: "+").map(String.init) : ["pk"]
        self.init(name, primaryKey: key)
    }
}
