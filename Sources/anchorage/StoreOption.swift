import ArgumentParser
import Foundation
import SyncCore
import SyncSQLite

/// A store named on the command line: `memory`, `sqlite:PATH` (the default
/// for servers and devices), or `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`.
struct StoreOption: ExpressibleByArgument, CustomStringConvertible {
    enum Kind {
        case memory
        case sqlite(path: String)
        case postgres(PostgresLocation)
    }

    let kind: Kind

    init?(argument: String) {
        if argument == "memory" {
            kind = .memory
        } else if argument.hasPrefix("sqlite:"), argument.count > "sqlite:".count {
            kind = .sqlite(path: String(argument.dropFirst("sqlite:".count)))
        } else if argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") {
            guard let location = PostgresLocation(url: argument) else { return nil }
            kind = .postgres(location)
        } else if !argument.contains(":") {
            kind = .sqlite(path: argument)
        } else {
            return nil
        }
    }

    var description: String {
        switch kind {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let location): location.description
        }
    }

    static var allValueStrings: [String] { ["memory", "sqlite:PATH", "postgres://USER@HOST:PORT/DATABASE"] }

    /// Opens the store, hands it to `body`, and closes it when `body` returns or throws.
    ///
    /// `readReplica`, a hot standby of a PostgreSQL store, answers the reads of changes for pulls;
    /// `postgresConnections` caps each PostgreSQL pool (``PostgresLocation/defaultConnections`` when `nil`).
    /// - Throws: exit status 64 when `readReplica` is given for a store that is not PostgreSQL.
    func withStore<Result: Sendable>(
        readReplica: PostgresLocation? = nil, postgresConnections: Int? = nil, _ body: (any SyncStore) async throws -> Result
    ) async throws -> Result {
        if let readReplica {
            guard case .postgres = kind else {
                throw failure("--postgres-replica \(readReplica) needs a postgres:// --store, not \(self)", code: 64)
            }
        }
        switch kind {
        case .memory:
            return try await body(MemoryStore())
        case .sqlite(let path):
            // Closed here, at a known point, rather than whenever the last reference goes.
            let store = try openSQLiteStore(path: path)
            let result: Result
            do {
                result = try await body(store)
            } catch {
                try? store.close()
                throw error
            }
            try? store.close()
            return result
        case .postgres(let location):
            return try await withPostgresStore(
                at: location, readReplica: readReplica,
                connections: postgresConnections ?? PostgresLocation.defaultConnections, body)
        }
    }
}

/// A PostgreSQL database named by a `postgres://` URL.
struct PostgresLocation: ExpressibleByArgument, CustomStringConvertible {
    var host: String
    var port: Int
    var username: String
    var password: String?
    var database: String

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`; the password
    /// may also come from the `PGPASSWORD` environment variable.
    init?(url: String) {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
            let username = components.user, !username.isEmpty
        else { return nil }
        let database = String(components.path.drop { $0 == "/" })
        self.host = host
        self.port = components.port ?? 5432
        self.username = username
        self.password = components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        self.database = database.isEmpty ? username : database
    }

    /// Reads a `postgres://` or `postgresql://` URL given on the command line.
    init?(argument: String) {
        guard argument.hasPrefix("postgres://") || argument.hasPrefix("postgresql://") else { return nil }
        self.init(url: argument)
    }

    /// The URL without its password.
    var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }
}
