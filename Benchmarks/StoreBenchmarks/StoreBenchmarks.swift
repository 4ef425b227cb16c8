// Store benchmarks: writing 100,000 changes in transactions of 1,000, and
// paging through 100,000 changes, in MemoryStore, SQLiteStore and (when a
// server is named) PostgresStore. Run in this folder with
// `swift package benchmark --target StoreBenchmarks`, or with PostgreSQL:
// `../scripts/with-postgres.sh swift package benchmark --target StoreBenchmarks`.

import Benchmark
import Foundation
import PostgresNIO
import SyncCore
import SyncPostgres
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
    for kind in StoreKind.measured {
        Benchmark("\(kind) apply 100,000 changes", configuration: configuration) { benchmark in
            for _ in benchmark.scaledIterations {
                let store = try await kind.makeStore()
                benchmark.startMeasurement()
                try await applyChanges(to: store.store)
                benchmark.stopMeasurement()
                try await store.close()
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
                let store = try await kind.makeStore()
                try await applyChanges(to: store.store)
                filled.store = store
            },
            teardown: {
                try await filled.store?.close()
                filled.store = nil
            }
        )
    }
}

/// The stores measured.
enum StoreKind: String, CaseIterable, CustomStringConvertible {
    case memory = "MemoryStore"
    case sqlite = "SQLiteStore"
    case postgres = "PostgresStore"

    var description: String { rawValue }

    /// The stores this run measures: PostgreSQL only when `ANCHORAGE_POSTGRES_PORT` names a server
    /// (as `scripts/with-postgres.sh` does).
    static var measured: [StoreKind] {
        postgresConfiguration == nil ? [.memory, .sqlite] : allCases
    }

    /// The PostgreSQL server named by the environment of `scripts/with-postgres.sh`, if any.
    static var postgresConfiguration: PostgresClient.Configuration? {
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["ANCHORAGE_POSTGRES_PORT"].flatMap(Int.init) else { return nil }
        return PostgresClient.Configuration(
            host: environment["ANCHORAGE_POSTGRES_HOST"] ?? "127.0.0.1", port: port,
            username: environment["ANCHORAGE_POSTGRES_USER"] ?? "anchorage", password: nil,
            database: environment["ANCHORAGE_POSTGRES_DATABASE"] ?? "postgres", tls: .disable)
    }

    /// A fresh, empty store: a SQLite one in a new temporary file, a PostgreSQL one in a new schema.
    func makeStore() async throws -> OpenStore {
        switch self {
        case .memory: return OpenStore(store: MemoryStore())
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("anchorage-store-benchmark-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = try SQLiteStore(path: directory.appendingPathComponent("store.sqlite").path)
            return OpenStore(store: store, file: directory)
        case .postgres:
            guard let configuration = Self.postgresConfiguration else {
                throw StoreBenchmarkFailure("no PostgreSQL server is named")
            }
            let client = PostgresClient(configuration: configuration)
            let running = Task { await client.run() }
            let schema = "bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            let store = try await PostgresStore(client: client, configuration: .init(schema: schema))
            return OpenStore(store: store, postgres: (client, running, schema))
        }
    }
}

/// A store and what to clean up after it: its temporary folder, or its PostgreSQL schema and pool.
struct OpenStore {
    let store: any SyncStore
    var file: URL? = nil
    var postgres: (client: PostgresClient, running: Task<Void, Never>, schema: String)? = nil

    /// Closes the store and deletes its folder or schema.
    func close() async throws {
        if let sqlite = store as? SQLiteStore { try sqlite.close() }
        if let file { try FileManager.default.removeItem(at: file) }
        if let postgres {
            _ = try await postgres.client.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(postgres.schema) CASCADE"))
            postgres.running.cancel()
        }
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
