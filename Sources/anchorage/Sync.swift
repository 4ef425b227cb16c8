import AppSync
import Aquasync
import ArgumentParser
import Foundation
import OTASync
import SyncCore
import SyncHTTP

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

            Exit status: 0 synced; 64 a bad argument, or no account or password; 66
            --ca-file cannot be read (65: it holds no certificate); 69 the server
            refused, could not be reached or is not trusted; 74 the store cannot be opened.
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
            server, which keeps what the server's mingle decided).
            """)
    var priority: Priority?

    @Option(name: .customLong("dataclass"), help: "OTA: a dataclass to sync, such as com.apple.Contacts. Repeatable.")
    var dataclasses: [String] = OTADefaults.dataclasses

    @Option(help: "OTA: the device's id; by default one made once and kept in the local store.")
    var deviceID: String?

    func run() async throws {
        do {
            try await store.withStore { localStore in
                // Everything the credentials need is settled before the first request.
                let account = try await DeviceSettings.account(user, stack: stack.rawValue, in: localStore)
                let credentials = try Self.credentials(
                    for: account, stack: stack, environment: ProcessInfo.processInfo.environment)
                try await connection.withTransport { transport in
                    try await sync(localStore, as: account, over: transport.with(CredentialsMiddleware(credentials)))
                }
            }
        } catch let error as SyncClientError {
            // Every stack's failure to reach the server or read its answer; an untrusted certificate says what to pass.
            throw failure(connection.describe(error, what: "sync"), code: 69)
        } catch let error as OTAClientError {
            // The OTA server refused a message or a dataclass.
            throw failure("sync failed: \(error)", code: 69)
        } catch let error as AppSyncError {
            // An appSync object that does not read back.
            throw failure("sync failed: \(error)", code: 69)
        }
    }

    /// Syncs `localStore` with the server once, in the chosen stack, and prints what happened.
    private func sync(_ localStore: any SyncStore, as account: AccountID?, over transport: any SyncClientTransport) async throws {
        let server = connection.server
        switch stack {
        case .aquasync:
            var configuration = AquasyncClient.Configuration()
            if let priority { configuration.conflictPolicy = priority.policy(for: stack) }
            let client = AquasyncClient(store: localStore, transport: transport, codec: codec.codec, configuration: configuration)
            let report = try await client.sync()
            print("synced with \(server) in \(codec.rawValue): pulled \(report.pulled), pushed \(report.pushed), latest UST \(try await client.latestUST())")
            Self.printRefused(report.refused)
        case .appsync:
            let client = AppSyncClient(
                store: localStore, transport: transport, codec: codec.codec,
                types: try appSyncTypes.map(AppSyncObjectType.init(argument:)),
                configuration: .init(conflictPolicy: (priority ?? .timestamp).policy(for: stack)))
            let report = try await client.sync()
            print("synced with \(server) in \(codec.rawValue): downloaded \(report.downloaded), uploaded \(report.uploaded), conflicts \(report.conflicts), rejected \(report.rejected.count)")
            Self.printRefused(report.refused)
        case .ota:
            guard let account else { throw Self.noAccount(stack) }
            let device: String
            if let deviceID { device = deviceID } else { device = try await DeviceSettings.deviceID(in: localStore) }
            var configuration = OTAClient.Configuration()
            if let priority { configuration.conflictPolicy = priority.policy(for: stack) }
            let client = OTAClient(
                records: OTADeviceRecords(store: localStore, account: account), deviceID: device,
                transport: transport, codec: codec.codec, dataclasses: Self.unique(dataclasses), configuration: configuration)
            let report = try await client.sync()
            print("synced with \(server) in \(codec.rawValue) as \(account) (device \(device)): \(Self.summary(report, dataclasses: client.dataclasses))")
            Self.printRefused(report.refused)
        }
        if let journalAccount = stack == .ota ? account : DeviceSettings.account {
            print(try await Self.waitingConflicts(in: localStore, account: journalAccount, stack: stack))
        }
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
