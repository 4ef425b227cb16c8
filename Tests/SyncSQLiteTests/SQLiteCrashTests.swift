import Foundation
import SyncCore
import SyncSQLite
import SyncTesting
import Testing

@Suite("SQLite store survives SIGKILL")
struct SQLiteCrashTests {
    /// The writer executable, built beside the test bundle.
    static var writerURL: URL? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent("StoreCrashWriter")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    @Test(
        "a writer killed at 50 random moments leaves exactly the transactions it reported committed, or one more",
        // Slow: 50 killed writer processes take 15 to 30 seconds in a debug build, so the test runs only when
        // ANCHORAGE_SLOW_TESTS asks for it (scripts/test.sh and CI do). This target does not depend on
        // TestSupport, so the check is the one of TestSupport's SlowTests.enabled, spelled out.
        .enabled(
            if: !["", "0"].contains(ProcessInfo.processInfo.environment["ANCHORAGE_SLOW_TESTS"] ?? ""),
            "slow: 50 SIGKILLs of a writing process (15 to 30 seconds); set ANCHORAGE_SLOW_TESTS=1 to run it (scripts/test.sh does)"),
        .enabled(if: writerURL != nil, "the StoreCrashWriter executable was not found beside the test bundle"))
    func killedWriterLosesNothing() async throws {
        let writer = try #require(Self.writerURL)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("crash.sqlite").path
        var random = SeededGenerator(seed: 2_026)
        var reported = 0

        for _ in 0..<50 {
            let target = reported + Int.random(in: 1...25, using: &random)
            reported = try await Self.onThreadOfItsOwn { try Self.runWriter(writer, path: path, killAfter: target) }
            #expect(reported >= target)

            let store = try SQLiteStore(path: path)
            #expect(try await store.integrityProblems().isEmpty)
            let account: AccountID = "crash"
            let (last, counter, records) = try await store.transaction(for: account) { tx in
                let last = Int(try await tx.metadata("last", for: "writer")?.integerValue ?? 0)
                let counter = Int(try await tx.record(RecordKey(collection: "state", id: "counter"))?.record.fields["n"]?.integerValue ?? 0)
                let records = try await tx.records(in: "log", after: nil, limit: 100_000).count
                return (last, counter, records)
            }
            // The kill may land after one more commit than was read: never fewer, never a part of one.
            #expect(last == reported || last == reported + 1, "last \(last), reported \(reported)")
            #expect(counter == last)
            #expect(records == last)
            let batches = try await store.changes(for: account, after: .start, in: ["batch"], limit: 1_000_000).records.count
            #expect(batches == (last / 10) * 500)
            try store.close()
            reported = last
        }
    }

    /// Runs `body`, which blocks on the writer's output and exit, on a thread of its own: a test that
    /// blocked a thread of the cooperative pool for its 50 runs would slow every other test in the process.
    static func onThreadOfItsOwn<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs the writer until it reports `target` commits, kills it with SIGKILL, and returns the last commit it reported.
    static func runWriter(_ writer: URL, path: String, killAfter target: Int) throws -> Int {
        let process = Process()
        process.executableURL = writer
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var buffer = Data()
        var last = 0
        let handle = output.fileHandleForReading
        while last < target {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
            if let line = lines.last(where: { $0.hasPrefix("committed ") }), let number = Int(line.dropFirst(10)) {
                last = number
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        buffer.append(handle.readDataToEndOfFile())
        let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
        return lines.compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max() ?? last
    }
}
