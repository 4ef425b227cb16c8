import AppSync
import Aquasync
import ArgumentParser
import Foundation
import OTASync
import SyncCore
import SyncHTTPClient
import SyncPush

/// `anchorage sync`: syncs a device's local store with a server once.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync a device's local store with a server once.",
        discussion: """
            The account is --user, with its password in the ANCHORAGE_PASSWORD
            environment variable, or the one a bearer token in ANCHORAGE_TOKEN names.
            The store remembers --user for each stack, so later syncs of the same
            store need only the password. Without a token, and with no account given
            or remembered, sync stops before sending anything (exit status 64).
            Edit the device's records with `anchorage records`.

            --stack ota syncs the --dataclass dataclasses with the server's /ota as
            the account, presenting --device-id (by default an id made on the store's
            first OTA use and kept in it). --stack appsync syncs the --appsync-type
            object types with /rest.

            An https:// server's certificate must be signed by a certificate authority
            the system trusts, or by one in the PEM file --ca-file names (your own CA):
            a certificate that is not trusted stops the sync at once with one line.

            With --watch, sync stays connected to the server's push stream (/push) and syncs each \
            collection another device changes, printing one line per sync, until interrupted; the \
            collections are the stack's (--model for Aquasync, --appsync-type, --dataclass), and those \
            the server has no push for are synced every poll interval it names. It syncs everything \
            once on connecting, and again whenever the server cannot prove nothing was missed.

            Exit status: 0 synced (changes the server refused for good are printed as `refused KEY: reason` \
            and dropped); 64 a bad argument, or no account or password; 66 --ca-file cannot be read (65: it holds \
            no certificate); 69 the server refused, could not be reached or is not trusted; 74 the store cannot be \
            opened.
            """
    )

    enum Stack: String, ExpressibleByArgument, CaseIterable {
        case aquasync
        case appsync
        case ota
    }

    enum Priority: String, ExpressibleByArgument, CaseIterable {
        case server, client, timestamp, ask

        /// The policy for `stack`'s client: `timestamp` is each stack's own newest-wins rule.
        func policy(for stack: Stack) -> any ConflictPolicy {
            switch self {
            case .server: ServerWinsPolicy()
            case .client: ClientWinsPolicy()
            case .timestamp: stack == .aquasync ? AquasyncNewestWins() : NewestWinsPolicy()
            case .ask: AskUserPolicy()
            }
        }
    }

    @Option(help: "The sync protocol.")
    var stack: Stack = .aquasync

    @OptionGroup var connection: ServerOptions

    @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
    var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

    @Option(help: "The codec messages travel in.")
    var codec: CodecChoice = .json

    @Option(
        help: """
            The account to sync as (needed with ANCHORAGE_PASSWORD); by default the one this store was last \
            used with for the stack.
            """)
    var user: String?

    @Option(name: .customLong("appsync-type"), help: "appSync: an object type as NAME or NAME:FIELD+FIELD. Repeatable.")
    var appSyncTypes: [String] = ["booking"]

    @Option(
        help: """
            Who wins a conflict this device meets: server, client, timestamp (the newer version), or ask (keep \
            it for `anchorage conflicts`); by default the stack's own rule (Aquasync and appSync: timestamp; OTA: \
            server, which keeps what the server's mingle decided). OTA: a server started with the default \
            --ota-conflicts server decides every conflict itself, so the device meets none and ask asks \
            nothing; only with --ota-conflicts device does this option decide. Questions left open by an \
            earlier ask stay open until `anchorage conflicts resolve` answers them.
            """)
    var priority: Priority?

    @Option(name: .customLong("dataclass"), help: "OTA: a dataclass to sync, such as com.apple.Contacts. Repeatable.")
    var dataclasses: [String] = OTADefaults.dataclasses

    @Option(help: "OTA: the device's id; by default one made once and kept in the local store.")
    var deviceID: String?

    @Flag(help: "Stay connected and sync on every push notification, one line per sync, until interrupted.")
    var watch = false

    @Option(help: "Aquasync with --watch: a model whose changes to watch for. Repeatable.")
    var model: [String] = ["Contact"]

    func run() async throws {
        try await store.withStore { localStore in
            // Everything the credentials need is settled before the first request.
            let account = try await DeviceSettings.account(user, stack: stack.rawValue, in: localStore)
            let credentials = try Self.credentials(
                for: account, stack: stack, environment: ProcessInfo.processInfo.environment)
            do {
                try await connection.withTransport { transport in
                    if watch {
                        try await self.watch(localStore, as: account, credentials: credentials, over: transport)
                    } else {
                        try await sync(localStore, as: account, over: transport.with(CredentialsMiddleware(credentials)))
                    }
                }
            } catch let error as SyncClientError {
                // Every stack's failure to reach the server or read its answer, and the protocol's own refusals
                // (an OTA status: `sync failed: com.apple.contacts.Contact: E_NotAllowed (604): …`); an untrusted
                // certificate says what to pass. The changes waiting to go up stay in the store's journal.
                throw failure(connection.describe(error, what: "sync", credentials: credentials), code: 69)
            }
        }
    }

    /// Syncs `localStore` with the server once, in the chosen stack, and prints what happened.
    private func sync(_ localStore: any SyncStore, as account: AccountID?, over transport: any SyncClientTransport) async throws {
        print(try await syncOnce(localStore, as: account, over: transport, only: nil))
        try await printConflicts(localStore, as: account)
    }

    /// Syncs `localStore` once — only the collection `only` where the stack can — prints the changes the
    /// server refused, and returns the line saying what happened.
    private func syncOnce(
        _ localStore: any SyncStore, as account: AccountID?, over transport: any SyncClientTransport, only: CollectionID?
    ) async throws -> String {
        let server = connection.server
        switch stack {
        case .aquasync:
            var configuration = AquasyncClient.Configuration()
            if let priority { configuration.conflictPolicy = priority.policy(for: stack) }
            let client = AquasyncClient(store: localStore, transport: transport, codec: codec.codec, configuration: configuration)
            let report = try await client.sync()
            Self.printRefused(report.refused)
            return "synced with \(server) in \(codec.rawValue): pulled \(report.pulled), pushed \(report.pushed), latest UST \(try await client.latestUST())"
        case .appsync:
            let types = try appSyncTypes.map(AppSyncObjectType.init(argument:))
            let client = AppSyncClient(
                store: localStore, transport: transport, codec: codec.codec,
                types: types.filter { only == nil || Self.collection(ofType: $0.name) == only },
                configuration: .init(conflictPolicy: (priority ?? .timestamp).policy(for: stack)))
            let report = try await client.sync()
            Self.printRefused(report.refused)
            return "synced with \(server) in \(codec.rawValue): downloaded \(report.downloaded), uploaded \(report.uploaded), conflicts \(report.conflicts), rejected \(report.rejected.count)"
        case .ota:
            guard let account else { throw Self.noAccount(stack) }
            let device: String
            if let deviceID { device = deviceID } else { device = try await DeviceSettings.deviceID(in: localStore) }
            var configuration = OTAClient.Configuration()
            if let priority { configuration.conflictPolicy = priority.policy(for: stack) }
            let client = OTAClient(
                records: OTADeviceRecords(store: localStore, account: account), deviceID: device,
                transport: transport, codec: codec.codec,
                dataclasses: Self.unique(dataclasses).filter { only == nil || CollectionID($0) == only }, configuration: configuration)
            let report = try await client.sync()
            Self.printRefused(report.refused)
            return "synced with \(server) in \(codec.rawValue) as \(account) (device \(device)): \(Self.summary(report, dataclasses: client.dataclasses))"
        }
    }

    /// Prints how many of the stack's conflicts wait for the user's answer.
    private func printConflicts(_ localStore: any SyncStore, as account: AccountID?) async throws {
        if let journalAccount = stack == .ota ? account : DeviceSettings.account {
            print(try await Self.waitingConflicts(in: localStore, account: journalAccount, stack: stack))
        }
    }

    // MARK: Watching

    /// The server collections the stack's records live in, which `--watch` monitors.
    var watchedCollections: [CollectionID] {
        get throws {
            switch stack {
            case .aquasync: return Self.unique(model).map { CollectionID("aquasync/" + $0) }
            case .appsync: return try appSyncTypes.map { Self.collection(ofType: try AppSyncObjectType(argument: $0).name) }
            case .ota: return Self.unique(dataclasses).map { CollectionID($0) }
            }
        }
    }

    /// Writes a line to standard output at once (print's buffer would hold it while watching).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// The collection of an appSync object type.
    static func collection(ofType name: String) -> CollectionID { CollectionID("appsync/" + name) }

    /// Stays connected to the push server, syncing each notified collection, until interrupted.
    private func watch(
        _ localStore: any SyncStore, as account: AccountID?, credentials: Credentials, over transport: HTTPClientTransport
    ) async throws {
        let token: String
        if let deviceID { token = deviceID } else { token = try await DeviceSettings.deviceID(in: localStore) }
        let syncing = transport.with(CredentialsMiddleware(credentials)).with(PushDeviceMiddleware(deviceToken: token))
        let collections = try watchedCollections
        let push = PushClient(
            server: try connection.url, credentials: credentials, deviceToken: token, collections: collections,
            transport: transport.with(CredentialsMiddleware(credentials)), codec: codec.codec,
            configuration: .init(tls: connection.caFile.map { PushClient.tls(trustingPEMFile: $0) })
        ) { collection in
            let line = try await syncOnce(localStore, as: account, over: syncing, only: collection)
            Self.say("\(collection): \(line)")
        }
        let events = Task {
            var watching: [CollectionID]?
            for await event in push.events {
                switch event {
                case .registered(let pushed, let poll):
                    guard watching != pushed else { continue }
                    watching = pushed
                    Self.say("watching \(pushed.map(\.rawValue).joined(separator: ", "))" + (poll.isEmpty ? "" : "; polling \(poll.map(\.rawValue).joined(separator: ", "))"))
                case .syncFailed(let collection, let message):
                    Self.say("\(collection): sync failed: \(message)")
                case .disconnected(let message, let retryIn):
                    Self.say("push stream closed (\(message)); reconnecting in \(retryIn)")
                default:
                    continue
                }
            }
        }
        defer { events.cancel() }
        try await push.run()
    }

    /// One line per change the server refused for good: its key and the server's reason.
    /// The change left the device's journal; the record keeps the device's version.
    static func printRefused(_ refused: [RecordKey: String]) {
        for (key, reason) in refused.sorted(by: { $0.key < $1.key }) {
            print("refused \(key): \(reason)")
        }
    }

    /// The line saying how many of `stack`'s conflicts wait for the user's answer.
    static func waitingConflicts(in store: any SyncStore, account: AccountID, stack: Stack) async throws -> String {
        let waiting = try await store.openConflicts(for: account).filter { stack.owns($0.key.collection) && $0.awaitsAnswer }.count
        switch waiting {
        case 0: return "no conflict waits for an answer"
        case 1: return "1 conflict waits for an answer: anchorage conflicts list"
        default: return "\(waiting) conflicts wait for an answer: anchorage conflicts list"
        }
    }

    /// The credentials from `environment`: a bearer token from ANCHORAGE_TOKEN,
    /// or else `account` with the password from ANCHORAGE_PASSWORD.
    /// - Throws: exit status 64, with one line, when there is no token and the
    ///   account or the password is missing, so nothing is sent that the server must refuse.
    static func credentials(
        for account: AccountID?, stack: Stack, environment: [String: String]
    ) throws -> Credentials {
        if let token = environment["ANCHORAGE_TOKEN"], !token.isEmpty { return .bearer(token) }
        guard let account else { throw noAccount(stack) }
        guard let password = environment["ANCHORAGE_PASSWORD"], !password.isEmpty else {
            throw failure("set ANCHORAGE_PASSWORD to the password of \(account) (or ANCHORAGE_TOKEN to a bearer token)", code: 64)
        }
        return .basic(username: account.rawValue, password: password)
    }

    /// The one line, naming `--user`, of a sync whose account is unknown (exit status 64).
    static func noAccount(_ stack: Stack) -> ExitCode {
        failure("name the account to sync as with --user (this store has not been used with one for \(stack.rawValue) yet)", code: 64)
    }

    /// The one-line account of an OTA session: round trips, items each way,
    /// the mode of each dataclass (in `dataclasses` order) and conflicts.
    static func summary(_ report: OTASyncReport, dataclasses: [String]) -> String {
        let modes = dataclasses.map { "\($0) \(report.modes[$0]?.rawValue ?? "not synced")" }.joined(separator: ", ")
        return "\(report.roundTrips) round trip\(report.roundTrips == 1 ? "" : "s"), sent \(report.sentItems), received \(report.receivedItems); "
            + "modes: \(modes); conflicts \(report.conflicts)"
    }

    /// `names` without repeats, in first-seen order.
    static func unique(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }
}
