import ArgumentParser
import SyncCore

/// Opens the SQLite store at `path`.
func openSQLiteStore(path: String) throws -> any SyncStore {
    throw ValidationError("the SQLite store is not part of this build yet; use --store memory")
}
