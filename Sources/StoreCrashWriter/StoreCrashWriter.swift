import Foundation
import SyncCore
import SyncSQLite

/// Writes to a SQLite store in a loop until it is killed, printing `committed N` after each
/// transaction returns. The crash test kills it with SIGKILL at random moments and checks
/// that the database holds exactly the transactions that were reported committed (or one
/// more, committed before the kill landed), never a part of one.
///
/// Transaction N puts record `r<N>`, sets the record `counter` to N and the metadata `last`
/// to N; every tenth transaction also writes 500 records `b<N>-<i>`.
@main
struct StoreCrashWriter {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: store-crash-writer DATABASE-PATH\n".utf8))
            exit(64)
        }
        let store = try SQLiteStore(path: arguments[1])
        let account: AccountID = "crash"
        let version = RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: "writer")
        var number = (try await store.transaction(for: account) { tx in
            try await tx.metadata("last", for: "writer")?.integerValue
        }) ?? 0
        while true {
            number += 1
            let current = number
            try await store.transaction(for: account) { tx in
                try await tx.put(SyncRecord(collection: "log", id: RecordID("r\(current)"), fields: ["n": .integer(current)], version: version))
                try await tx.put(SyncRecord(collection: "state", id: "counter", fields: ["n": .integer(current)], version: version))
                if current % 10 == 0 {
                    for index in 0..<500 {
                        try await tx.put(SyncRecord(
                            collection: "batch", id: RecordID("b\(current)-\(index)"),
                            fields: ["payload": .string(String(repeating: "x", count: 200))], version: version))
                    }
                }
                try await tx.setMetadata(.integer(current), "last", for: "writer")
            }
            FileHandle.standardOutput.write(Data("committed \(current)\n".utf8))
        }
    }
}
