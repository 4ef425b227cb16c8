#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncCore
import SyncTesting
import TestSupport
import Testing

/// The crash matrix: for each stack, `anchorage sync` killed with `SIGKILL` at
/// random moments while it carries a device's edits to `anchorage serve`, and
/// then the server killed the same way during the device's syncs. Afterwards
/// every edit the application was told is saved is on the server exactly
/// once — none lost, none duplicated, deleted records deleted — as a second
/// device that syncs everything, and the first device itself, both show.
///
/// The device tests run one stack at a time, since the device's sync keeps a
/// core busy; the server tests, which spend much of their time waiting for
/// the server to start again and the device to retry, run side by side with
/// them and with each other.
@Suite(
    "Crash matrix: processes killed during a sync lose and duplicate no edit",
    // Slow: the six tests take two to four and a half minutes on two cores in a debug build, so the matrix
    // runs only when ANCHORAGE_SLOW_TESTS asks for it (scripts/test.sh and CI do, after the rest of the suite).
    .enabled(if: SlowTests.enabled, "slow: 300 SIGKILLs during syncs (2 to 4.5 minutes); \(SlowTests.howToRun)"))
struct CrashMatrixTests {
    /// Kills that must land during a sync, per stack and victim.
    static let kills = 50

    /// The edits in the sync the kill moments are measured against, and in each batch the device makes
    /// before the first kill and whenever a sync completes: 1,000, which keeps the six tests to two or
    /// three minutes on two cores with a debug build. `ANCHORAGE_CRASH_EDITS=100` runs a quicker matrix.
    static let batchSize: Int = {
        ProcessInfo.processInfo.environment["ANCHORAGE_CRASH_EDITS"].flatMap(Int.init).map { max(1, $0) } ?? 1_000
    }()

    /// The run's seed: `ANCHORAGE_CRASH_SEED` replays one, otherwise each run draws a new one. Every
    /// test prints it, and every failure names it.
    static let seed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["ANCHORAGE_CRASH_SEED"], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64.max)
    }()

    @Test(
        "every acknowledged edit reaches the server once through 50 SIGKILLs of the syncing device", .serialized,
        arguments: CrashStack.allCases)
    func deviceKilledDuringSync(stack: CrashStack) async throws {
        try await Self.killDuringSyncs(stack, .device)
    }

    @Test(
        "every acknowledged edit reaches the server once through 50 SIGKILLs of the server during syncs",
        arguments: CrashStack.allCases)
    func serverKilledDuringSync(stack: CrashStack) async throws {
        try await Self.killDuringSyncs(stack, .server)
    }

    /// Makes edits on a device, kills `victim` 50 times during the device's syncs, syncs once more
    /// and checks the server, a fresh device and the device itself against the edits.
    static func killDuringSyncs(_ stack: CrashStack, _ victim: Victim) async throws {
        let started = ContinuousClock.now
        // Each test draws from a sequence of its own, so they replay alike whatever runs beside them.
        let caseNumber = UInt64(CrashStack.allCases.firstIndex(of: stack) ?? 0) * 2 + (victim == .server ? 1 : 0)
        var run = try await CrashRun(stack: stack, seed: Self.seed &+ caseNumber &* 0x9E37_79B9_7F4A_7C15)
        let replay = "\(stack) \(victim), ANCHORAGE_CRASH_SEED=\(Self.seed)"
        print("crash matrix \(stack) \(victim): seed \(Self.seed)")

        // The server already has a first batch from an earlier sync, which is the one uninterrupted
        // sync the kill moments are drawn against.
        try await run.edit(Self.batchSize, addsOnly: true)
        let fullSync = try await run.measuredSync()
        try await run.edit(Self.batchSize)

        var rounds = 0
        var completed = 0
        var killed = 0
        // The moments are drawn against the shortest whole sync seen so far: a sync measured while the
        // machine was busier than later would put most moments after the syncs' ends.
        var window = fullSync
        // A sync that completes before its moment gets a new batch and another round; the bound only
        // stops a run whose syncs all end at once (a machine far busier when the sync was measured).
        while killed < Self.kills && rounds < Self.kills * 6 {
            rounds += 1
            let outcome = try await run.sync(killing: victim, atMost: Self.kills - killed, within: window)
            killed += outcome.kills
            switch victim {
            case .device:
                #expect(outcome.status == 0 || outcome.kills == 1, "sync \(rounds): \(outcome.errorText) (\(replay))")
            case .server:
                // The device's sync retries, or fails and leaves its edits for the next sync: both are fine.
                #expect(
                    outcome.status == 0 || (outcome.kills > 0 && outcome.status == 69),
                    "sync \(rounds): exit status \(outcome.status): \(outcome.errorText) (\(replay))")
            }
            if outcome.status == 0 {
                // Nothing left to send: new edits, so the next kill lands during real work again.
                if outcome.kills == 0 { window = min(window, outcome.duration) }
                completed += 1
                try await run.edit(Self.batchSize)
            }
        }
        #expect(killed == Self.kills, "kills that landed during a sync in \(rounds) rounds (\(replay))")

        // One uninterrupted sync, then a new device that syncs everything.
        let final = try await run.sync(killing: nil)
        try #require(final.status == 0, "the final sync: \(final.errorText) (\(replay))")
        let fresh = try await run.syncFreshDevice()
        try #require(fresh.status == 0, "the fresh device's sync: \(fresh.errorText) (\(replay))")
        let onFresh = run.ledger.differences(from: try await stack.liveRecords(inStoreAt: run.freshDevicePath))
        #expect(onFresh.isEmpty, "a fresh device after the server got everything: \(onFresh) (\(replay))")
        let onDevice = run.ledger.differences(from: try await stack.liveRecords(inStoreAt: run.devicePath))
        #expect(onDevice.isEmpty, "the device that made the edits: \(onDevice) (\(replay))")
        let stopped = try await run.server.stop()
        #expect(stopped.status == 0, "the server stopped cleanly: \(stopped.errorText)")

        print(
            "crash matrix \(stack) \(victim): one sync of \(Self.batchSize) edits \(fullSync) (at the end \(window)), "
                + "\(killed) kills in \(rounds) syncs (\(completed) completed), \(run.ledger.editCount) edits, "
                + "\(run.ledger.live.count) live records, \(ContinuousClock.now - started)")
    }
}

/// What is killed in a test.
enum Victim: Sendable {
    /// The device's `anchorage sync` process.
    case device
    /// The `anchorage serve` process, during the device's sync.
    case server
}

/// How one `anchorage sync` ended.
struct SyncOutcome {
    /// Its exit status (`128 + 9` when killed).
    var status: Int32
    /// How many kills landed while it ran: its own, or the server's.
    var kills: Int
    /// What it wrote to standard error.
    var errorText: String
    /// How long it ran.
    var duration: Duration = .zero
}

/// One stack's device and server in a temporary folder, the edits the
/// application has made, and the seeded generator every random choice comes from.
struct CrashRun {
    static let password = "crash-matrix-password"

    let stack: CrashStack
    let tool: AnchorageTool
    let folder: TemporaryFolder
    let server: CrashServer
    private var random: SeededGenerator
    private(set) var ledger = EditLedger()
    private var ids: [String: String] = [:]

    var devicePath: String { folder.path("device.sqlite") }
    var freshDevicePath: String { folder.path("fresh-device.sqlite") }

    /// Makes the account `ada` and starts `anchorage serve` on a SQLite store file in a new folder.
    init(stack: CrashStack, seed: UInt64) async throws {
        self.stack = stack
        tool = try AnchorageTool()
        folder = try TemporaryFolder("crash-matrix-\(stack)")
        random = SeededGenerator(seed: seed)
        let users = folder.path("users.txt")
        let added = try await tool.run(
            ["users", "add", CrashStack.account.rawValue, "--file", users, "--iterations", "1000"],
            input: Array("\(Self.password)\n".utf8))
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        server = try await CrashServer(
            tool,
            arguments: ["--store", "sqlite:" + folder.path("server.sqlite"), "--users", users, "--log-level", "warning"])
    }

    /// Makes `count` edits on the device through the stack's client, each acknowledged when this returns.
    mutating func edit(_ count: Int, addsOnly: Bool = false) async throws {
        let edits = ledger.nextBatch(count, addsOnly: addsOnly, using: &random)
        try await stack.write(edits, toStoreAt: devicePath, ids: &ids)
    }

    /// Runs one whole sync of the device and returns how long it took.
    mutating func measuredSync() async throws -> Duration {
        let started = ContinuousClock.now
        let outcome = try await sync(killing: nil)
        try #require(outcome.status == 0, "the measured sync: \(outcome.errorText)")
        return ContinuousClock.now - started
    }

    /// Runs `anchorage sync` of the device until it ends, killing `victim` at random moments while it
    /// runs: the sync itself once, or the server up to `limit` times, started again at once each time.
    mutating func sync(killing victim: Victim?, atMost limit: Int = 0, within fullSync: Duration = .zero) async throws
        -> SyncOutcome
    {
        let started = ContinuousClock.now
        let sync = try Self.startSync(tool, devicePath, stack, server.url)
        var kills = 0
        let ended = try await withThrowingTaskGroup(of: Int32?.self, returning: Int32?.self) { group in
            // Only this task waits for the process (a second wait would race it for the exit status).
            group.addTask { try await sync.waitForExit() }
            while let victim, kills < (victim == .device ? min(limit, 1) : limit) {
                // The point of the test: each kill lands at a moment drawn uniformly between now and the
                // length of one whole sync, so over the rounds the kills hit every stage of a sync —
                // starting up, reading the store, sending, the server writing, the answer, the device
                // recording it. This is the only timed wait in the test.
                let moment = Duration.nanoseconds(Int64.random(in: 0...fullSync.nanoseconds, using: &random))
                group.addTask {
                    try await Task.sleep(for: moment)
                    return nil
                }
                if let status = try await group.next() ?? nil {
                    group.cancelAll()
                    return status
                }
                switch victim {
                case .device: sync.send(SIGKILL)
                case .server: try await server.killAndRestart()
                }
                kills += 1
            }
            return try await group.next() ?? nil
        }
        let status = try #require(ended, "the sync's exit status")
        let errorText = String(decoding: sync.standardError, as: UTF8.self)
        let killedItself = victim == .device && status == 128 + SIGKILL
        return SyncOutcome(
            status: status, kills: victim == .device ? (killedItself ? 1 : 0) : kills, errorText: errorText,
            duration: ContinuousClock.now - started)
    }

    /// Syncs a new device with the server: it receives every record the server holds.
    func syncFreshDevice() async throws -> SyncOutcome {
        let sync = try Self.startSync(tool, freshDevicePath, stack, server.url)
        let status = try await sync.waitForExit()
        return SyncOutcome(status: status, kills: 0, errorText: String(decoding: sync.standardError, as: UTF8.self))
    }

    private static func startSync(
        _ tool: AnchorageTool, _ storePath: String, _ stack: CrashStack, _ url: URL
    ) throws -> ChildProcess.Running {
        let arguments =
            ["sync", "--server", url.absoluteString, "--user", CrashStack.account.rawValue, "--store", "sqlite:" + storePath]
            + stack.syncArguments
        return try ChildProcess.start(
            tool.path, arguments: arguments, environment: ["ANCHORAGE_PASSWORD": password, "ANCHORAGE_TOKEN": ""])
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}
