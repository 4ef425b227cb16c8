import PostgresNIO
import SyncCore

/// Turns the errors of postgres-nio and PostgreSQL into ``StoreError``s.
enum PostgresErrors: StoreErrorWrapping {
    /// The ``StoreError`` for an error of postgres-nio or PostgreSQL met while doing `operation`.
    static func storeError(forLibraryError error: any Error, while operation: String) -> StoreError? {
        switch error {
        case let postgresError as PSQLError:
            let code = code(for: postgresError)
            let detail = postgresError.serverInfo?[.message].map { "\($0) (SQLSTATE \(sqlState(of: postgresError) ?? "?"))" }
            return StoreError(code, "\(operation): \(detail ?? String(describing: postgresError.code))", underlying: error)
        case let decodingError as PostgresDecodingError:
            return StoreError(.corrupt, "\(operation): \(decodingError)", underlying: error)
        default:
            return nil
        }
    }

    /// Whether `error` is PostgreSQL refusing a transaction because of a concurrent one
    /// (serialization failure or deadlock): running it again can succeed.
    static func isSerializationFailure(_ error: any Error) -> Bool {
        guard let postgresError = error as? PSQLError, let state = sqlState(of: postgresError) else { return false }
        return state == PostgresError.Code.serializationFailure.raw || state == PostgresError.Code.deadlockDetected.raw
    }

    /// The SQLSTATE of an error the server reported, `nil` for a client-side error.
    private static func sqlState(of error: PSQLError) -> String? {
        error.serverInfo?[.sqlState]
    }

    /// The kind of failure a postgres-nio error stands for.
    private static func code(for error: PSQLError) -> StoreError.Code {
        guard let state = sqlState(of: error) else { return .unavailable }
        if state == "53100" { return .storageFull }  // disk_full
        switch state.prefix(2) {
        case "40": return .conflict  // transaction rollback: serialization failure, deadlock
        case "22": return .invalidArgument  // data exception: a value PostgreSQL cannot store
        case "23", "42": return .corrupt  // a broken constraint, or tables that are not what this version expects
        default: return .unavailable  // connection, resources, operator intervention, …
        }
    }
}

/// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
func withStoreErrors<T>(_ description: String, _ operation: () async throws -> T) async throws -> T {
    try await PostgresErrors.withStoreErrors(description, operation)
}
