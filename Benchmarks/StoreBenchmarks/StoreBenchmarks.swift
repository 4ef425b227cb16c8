// Store benchmarks: writing 100,000 changes in transactions of 1,000, and
// paging through 100,000 changes, in MemoryStore and SQLiteStore. Run with
// `swift package benchmark --target StoreBenchmarks` in this folder.

import Benchmark
import Foundation
import SyncCore
import SyncSQLite

/// How many changes each benchmark writes or reads.
let changeCount = 100_000
/// How many changes one transaction writes, and one page of changes holds.
let batchSize = 1_000

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 0,
        maxDuration: .seconds(10),
        maxIterations: 5
    )
    for kind in StoreKind.allCases {
        Benchmark("\(kind) apply 100,000 changes", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                let store = try kind.makeStore()
                benchmark.startMeasurement()
                try await applyChanges(to: store.store)
                benchmark.stopMeasurement()
                try store.close()
            }
        }

        let filled = FilledStore()
        Benchmark(
            "\(kind) changes after position",
            configuration: configuration,
            closure: { benchmark in
                guard let store = filled.store?.store else { throw StoreBenchmarkFailure("the store was not set up") }
                for _ in benchmark.scaledIterations {
                    let read = try await readAllChanges(from: store)
                    guard read == changeCount else { throw StoreBenchmarkFailure("read \(read) changes") }
                }
            },
            setup: {
                let store = try kind.makeStore()
                try await applyChanges(to: store.store)
                filled.store = store
            },
            teardown: {
                try filled.store?.close()
                filled.store = nil
            }
        )
    }
}

/// The stores measured.
enum StoreKind: String, CaseIterable, CustomStringConvertible {
    case memory = "MemoryStore"
    case sqlite = "SQLiteStore"

    var description: String { rawValue }

    /// A fresh, empty store; a SQLite one in a new temporary file.
    func makeStore() throws -> OpenStore {
        switch self {
        case .memory: return OpenStore(store: MemoryStore(), file: nil)
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("anchorage-store-benchmark-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = try SQLiteStore(path: directory.appendingPathComponent("store.sqlite").path)
            return OpenStore(store: store, file: directory)
        }
    }
}

/// A store and the temporary folder it lives in, if any.
struct OpenStore {
    let store: any SyncStore
    let file: URL?

    /// Closes the store and deletes its folder.
    func close() throws {
        if let sqlite = store as? SQLiteStore { try sqlite.close() }
        if let file { try FileManager.default.removeItem(at: file) }
    }
}

/// The store a paging benchmark reads, filled in its setup.
final class FilledStore {
    var store: OpenStore?
}

/// The account every benchmark writes to.
let account: AccountID = "benchmark"

/// Writes ``changeCount`` contact records in transactions of ``batchSize``.
func applyChanges(to store: any SyncStore) async throws {
    for batch in 0..<(changeCount / batchSize) {
        try await store.transaction(for: account) { transaction in
            for index in (batch * batchSize)..<((batch + 1) * batchSize) {
                try await transaction.put(contactRecord(index))
            }
        }
    }
}

/// Reads every change after the start, a page of ``batchSize`` at a time; returns how many.
func readAllChanges(from store: any SyncStore) async throws -> Int {
    var position = ChangePosition.start
    var read = 0
    while true {
        let batch = try await store.changes(for: account, after: position, in: nil, limit: batchSize)
        read += batch.records.count
        position = batch.lastPosition
        if !batch.hasMore || batch.records.isEmpty { return read }
    }
}

/// A small contact record, different for every index.
func contactRecord(_ index: Int) -> SyncRecord {
    SyncRecord(
        collection: "contacts",
        id: RecordID(String(format: "contact-%06d", index)),
        fields: [
            "firstName": .string("Ada \(index)"),
            "lastName": "Lovelace",
            "email": .string("ada\(index)@example.org"),
            "age": .integer(Int64(index % 100)),
            "modified": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(index))),
        ],
        version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), node: "bench")
    )
}

/// A store benchmark that could not run as designed.
struct StoreBenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
