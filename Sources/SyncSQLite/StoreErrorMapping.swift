import GRDB
import SyncCore

/// Thrown inside a commit when another process changed the account since the
/// transaction read it; the store runs the transaction again.
struct RevisionConflict: Error {}

extension StoreError {
    /// The ``StoreError`` for an error of GRDB or SQLite met while doing `operation`;
    /// a ``StoreError``, a `CancellationError` and a ``RevisionConflict`` pass through unchanged.
    static func wrapping(_ error: any Error, while operation: String) -> any Error {
        switch error {
        case is StoreError, is CancellationError, is RevisionConflict:
            return error
        case let databaseError as DatabaseError:
            return StoreError(code(for: databaseError), "\(operation): \(databaseError)", underlying: databaseError)
        case let decodingError as RowDecodingError:
            return StoreError(.corrupt, "\(operation): \(decodingError)", underlying: decodingError)
        default:
            return StoreError(.unavailable, "\(operation): \(error)", underlying: error)
        }
    }

    /// The kind of failure a SQLite result code stands for.
    private static func code(for error: DatabaseError) -> Code {
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
    do {
        return try await operation()
    } catch {
        throw StoreError.wrapping(error, while: description)
    }
}

/// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
func withStoreErrors<T>(_ description: String, _ operation: () throws -> T) throws -> T {
    do {
        return try operation()
    } catch {
        throw StoreError.wrapping(error, while: description)
    }
}
