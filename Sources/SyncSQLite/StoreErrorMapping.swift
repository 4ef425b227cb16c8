import GRDB
import SyncCore

/// Turns the errors of GRDB and SQLite into ``StoreError``s.
enum SQLiteErrors: StoreErrorWrapping {
    /// The ``StoreError`` for an error of GRDB or SQLite met while doing `operation`.
    static func storeError(forLibraryError error: any Error, while operation: String) -> StoreError? {
        switch error {
        case let databaseError as DatabaseError:
            StoreError(code(for: databaseError), "\(operation): \(databaseError)", underlying: databaseError)
        case let decodingError as RowDecodingError:
            StoreError(.corrupt, "\(operation): \(decodingError)", underlying: decodingError)
        default:
            nil
        }
    }

    /// The kind of failure a SQLite result code stands for.
    private static func code(for error: DatabaseError) -> StoreError.Code {
        switch error.resultCode {
        case .SQLITE_CORRUPT, .SQLITE_NOTADB, .SQLITE_CONSTRAINT, .SQLITE_MISMATCH, .SQLITE_FORMAT:
            .corrupt
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            .conflict
        case .SQLITE_FULL:
            .storageFull
        default:
            .unavailable
        }
    }
}

/// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
func withStoreErrors<T>(_ description: String, _ operation: () async throws -> T) async throws -> T {
    try await SQLiteErrors.withStoreErrors(description, operation)
}

/// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
func withStoreErrors<T>(_ description: String, _ operation: () throws -> T) throws -> T {
    try SQLiteErrors.withStoreErrors(description, operation)
}
