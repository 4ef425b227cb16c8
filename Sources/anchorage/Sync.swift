import AppSync
import Aquasync
import ArgumentParser
import Foundation
import SyncCore
import SyncHTTP

/// `anchorage sync`: syncs a device's local store with a server once.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync a device's local store with a server once.",
        discussion: """
            The password comes from the ANCHORAGE_PASSWORD environment variable, or a bearer
            token from ANCHORAGE_TOKEN. Edit the device's records with `anchorage records`.
            """
    )

    enum Stack: String, ExpressibleByArgument, CaseIterable {
        case aquasync
        case appsync
    }

    enum Priority: String, ExpressibleByArgument, CaseIterable {
        case server, client, timestamp

        var policy: any ConflictPolicy {
            switch self {
            case .server: ServerWinsPolicy()
            case .client: ClientWinsPolicy()
            case .timestamp: NewestWinsPolicy()
            }
        }
    }

    @Option(help: "The sync protocol.")
    var stack: Stack = .aquasync

    @Option(help: "The server's address, such as http://127.0.0.1:8080.")
    var server: String

    @Option(help: "The device's local store: sqlite:PATH, postgres://USER@HOST:PORT/DATABASE or memory.")
    var store = StoreOption(argument: "sqlite:anchorage-device.sqlite")!

    @Option(help: "The codec messages travel in.")
    var codec: CodecChoice = .json

    @Option(help: "The account to sync as.")
    var user: String?

    @Option(name: .customLong("appsync-type"), help: "appSync: an object type as NAME or NAME:FIELD+FIELD. Repeatable.")
    var appSyncTypes: [String] = ["booking"]

    @Option(help: "appSync: who wins a conflict.")
    var priority: Priority = .timestamp

    func run() async throws {
        guard let url = URL(string: server), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("--server must be an http:// or https:// address")
        }
        var transport: any SyncClientTransport = HTTPClientTransport(baseURL: url)
        let environment = ProcessInfo.processInfo.environment
        if let token = environment["ANCHORAGE_TOKEN"] {
            transport = transport.with(CredentialsMiddleware(.bearer(token)))
        } else if let user {
            transport = transport.with(
                CredentialsMiddleware(.basic(username: user, password: environment["ANCHORAGE_PASSWORD"] ?? "")))
        }
        do {
            try await store.withStore { localStore in
                switch stack {
                case .aquasync:
                    let client = AquasyncClient(store: localStore, transport: transport, codec: codec.codec)
                    let report = try await client.sync()
                    print("synced with \(server) in \(codec.rawValue): pulled \(report.pulled), pushed \(report.pushed), latest UST \(try await client.latestUST())")
                case .appsync:
                    let client = AppSyncClient(
                        store: localStore, transport: transport, codec: codec.codec,
                        types: try appSyncTypes.map(AppSyncObjectType.init(argument:)), policy: priority.policy)
                    let report = try await client.doSync()
                    print("synced with \(server) in \(codec.rawValue): downloaded \(report.downloaded), uploaded \(report.uploaded), conflicts \(report.conflicts), rejected \(report.rejected.count)")
                }
            }
        } catch let error as AquasyncClientError {
            throw failure("sync failed: \(error)", code: 69)
        } catch let error as AppSyncError {
            throw failure("sync failed: \(error)", code: 69)
        } catch let error as TransportError {
            throw failure("sync failed: \(error)", code: 69)
        }
    }
}
