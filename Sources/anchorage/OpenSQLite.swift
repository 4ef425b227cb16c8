import ArgumentParser
import SyncCore
import SyncSQLite

/// Opens the SQLite store at `path`, creating it when missing.
func openSQLiteStore(path: String) throws -> SQLiteStore {
    do {
        return try SQLiteStore(path: path)
    } catch {
        throw failure("cannot open the SQLite store at \(path): \(error)", code: 74)
    }
}
