/// Thrown inside a commit when another process changed the account since the
/// transaction read it; the store runs the transaction again.
package struct RevisionConflict: Error {
    /// Makes the error.
    package init() {}
}

/// How a durable store turns what its database library throws into ``StoreError``s.
package protocol StoreErrorWrapping {
    /// The ``StoreError`` for `error`, met while doing `operation`, when the database library threw it; `nil` for
    /// any other error.
    static func storeError(forLibraryError error: any Error, while operation: String) -> StoreError?
}

extension StoreErrorWrapping {
    /// The error to report for `error`, met while doing `operation`: a ``StoreError``, a `CancellationError` and
    /// a ``RevisionConflict`` pass through unchanged, an error of the database library becomes the ``StoreError``
    /// it stands for, and any other one a ``StoreError/Code/unavailable``.
    package static func wrapping(_ error: any Error, while operation: String) -> any Error {
        switch error {
        case is StoreError, is CancellationError, is RevisionConflict:
            return error
        default:
            return storeError(forLibraryError: error, while: operation)
                ?? StoreError(.unavailable, "\(operation): \(error)", underlying: error)
        }
    }

    /// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
    package static func withStoreErrors<T>(_ description: String, _ operation: () async throws -> T) async throws -> T {
        do {
            return try await operation()
        } catch {
            throw wrapping(error, while: description)
        }
    }

    /// Runs `operation`, turning what it throws into a ``StoreError`` that names `description`.
    package static func withStoreErrors<T>(_ description: String, _ operation: () throws -> T) throws -> T {
        do {
            return try operation()
        } catch {
            throw wrapping(error, while: description)
        }
    }
}
