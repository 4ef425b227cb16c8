// sync-load: what one `anchorage serve` process sustains, as a new user would run it. Not a timed test:
//
//     swift build -c release --product sync-load
//     .build/release/sync-load --anchorage PATH [--postgres postgres://USER@HOST:PORT/DB] [--json OUT.json]
//
// (`../scripts/with-postgres.sh` provides a PostgreSQL server; `performance.sh` runs everything and the
// Kinto peer in one go.) The server is a child process built in release mode; the devices speak Aquasync's
// wire over HTTP with JSON from this process (WireDevice), each with its own account and connection:
//
// - fast syncs: N devices (10, 100, 1,000) each save one contact and sync (push 1 + pull: one request,
//   the pack sent on the condition that nothing waits to be pulled) in a loop: syncs/s, p50/p99 of a
//   sync, the server's CPU time per sync (/proc/PID/stat) and its peak RSS; each figure the median of 3
//   runs (--repeat), each run with a server of its own;
// - import: `anchorage records import` of 100,000 contacts (SyncSamples, no photos) from JSON Lines into a
//   SQLite device: seconds;
// - upload: `anchorage sync` of a copy of that device sends the 100,000 contacts: records/s, the device's
//   and the server's peak RSS;
// - pull: `anchorage sync` brings the 100,000 contacts into an empty SQLite device: the same figures;
//   upload and pull each the run of median time of 3, with the highest peak RSS of the three.
// Every run starts after the disk has written what the runs before left (sync(2)).
import BenchmarkServers
import Foundation
import NIOCore
import NIOPosix
import SyncCore
import SyncJSON
import SyncSamples

@main
struct SyncLoad {
    /// Runs the benchmark; a failure is one line on standard error and exit status 1.
    static func main() async {
        var failure: (any Error)?
        do { try await run(Options(CommandLine.arguments)) } catch { failure = error }
        try? FileManager.default.removeItem(atPath: scratchFolder)
        if let failure {
            FileHandle.standardError.write(Data("sync-load: \(failure)\n".utf8))
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        var results = Results()
        print("sync-load: \(ProcessInfo.processInfo.processorCount) cores, \(options.seconds) s a run, \(options.contacts) contacts")
        let contacts = SampleContacts().make(count: options.contacts, photos: false)
        var stores: [(name: String, store: (String) throws -> String)] = [
            ("sqlite", { _ in "sqlite:" + temporaryPath("server", "sqlite") })
        ]
        if let postgres = options.postgres { stores.append(("postgres", { _ in postgres })) }
        // The import comes first: the device it fills is the one each upload starts from (a copy of it).
        var imported: String?
        if options.contacts > 0 {
            flushToDisk()
            let (seconds, device, peakRSS) = try importWithCommandLine(contacts, anchorage: options.anchorage)
            imported = device
            results.values["import.seconds"] = seconds
            results.values["import.records"] = Double(contacts.count)
            results.values["import.records_per_s"] = Double(contacts.count) / seconds
            results.values["import.device_rss_mb"] = Double(peakRSS) / 1_048_576
            print(
                "import: \(contacts.count) contacts with `anchorage records import` in \(format(seconds, 2)) s "
                    + "(\(Int(Double(contacts.count) / seconds)) records/s), peak RSS \(peakRSS / 1_048_576) MB")
        }
        for (name, store) in stores {
            for devices in options.devices {
                // The machine's speed wanders from minute to minute: each figure is the median of several runs.
                var runs: [FastSyncRun] = []
                for _ in 0..<max(1, options.repeats) {
                    let prefix = "\(name)-\(devices)-\(UUID().uuidString.prefix(8).lowercased())"
                    let server = try ServerProcess(
                        anchorage: options.anchorage, store: try store(prefix), accounts: (0..<devices).map { "\(prefix)-d\($0)" },
                        folder: temporaryPath("server", "d"))
                    defer { server.stop() }
                    flushToDisk()
                    let run = try await fastSyncs(
                        url: server.url, servers: [server], accounts: (0..<devices).map { "\(prefix)-d\($0)" },
                        seconds: options.seconds)
                    runs.append(run)
                    print(run.line(store: name, devices: devices))
                }
                let median = FastSyncMedians(runs)
                results.add("\(name).fast.\(devices)", median)
                if runs.count > 1 { print(median.line(store: name, devices: devices)) }
            }
            if let imported {
                var uploads: [BulkRun] = []
                var pulls: [BulkRun] = []
                for _ in 0..<max(1, options.repeats) {
                    let account = "\(name)-bulk-\(UUID().uuidString.prefix(8).lowercased())"
                    let server = try ServerProcess(
                        anchorage: options.anchorage, store: try store(account), accounts: [account],
                        folder: temporaryPath("server", "d"))
                    defer { server.stop() }
                    let device = try copyOfDevice(imported)
                    let upload = try syncWithCommandLine(
                        device: device, server: server, account: account, anchorage: options.anchorage,
                        expecting: "pushed \(contacts.count)", records: contacts.count)
                    uploads.append(upload)
                    print(upload.line(store: name, what: "upload"))
                    let pull = try syncWithCommandLine(
                        device: temporaryPath("pull-device", "sqlite"), server: server, account: account, anchorage: options.anchorage,
                        expecting: "pulled \(contacts.count)", records: contacts.count)
                    pulls.append(pull)
                    print(pull.line(store: name, what: "pull"))
                    try? FileManager.default.removeItem(atPath: device)
                }
                for (what, runs) in [("upload", uploads), ("pull", pulls)] {
                    let median = BulkRun.median(of: runs)
                    results.add("\(name).\(what)", median)
                    if runs.count > 1 { print(median.line(store: name, what: "\(what) (median of \(runs.count) runs)")) }
                }
            }
        }
        if let postgres = options.postgres {
            for processes in options.processes {
                for devices in options.devices {
                    var runs: [FastSyncRun] = []
                    for _ in 0..<max(1, options.repeats) {
                        flushToDisk()
                        let run = try await balancedFastSyncs(
                            processes: processes, devices: devices, postgres: postgres, options: options)
                        runs.append(run)
                        print(run.line(store: "postgres behind nginx, \(processes) processes", devices: devices))
                    }
                    let median = FastSyncMedians(runs)
                    results.add("postgres.balanced.\(processes).fast.\(devices)", median)
                    if runs.count > 1 { print(median.line(store: "postgres behind nginx, \(processes) processes", devices: devices)) }
                }
            }
        }
        if let json = options.json {
            try results.write(to: json)
            print("results written to \(json)")
        }
    }

    // MARK: Several processes behind nginx

    /// Fast syncs of `devices` devices through nginx in front of `processes` `anchorage serve` processes on
    /// one PostgreSQL database.
    static func balancedFastSyncs(
        processes: Int, devices: Int, postgres: String, options: Options
    ) async throws -> FastSyncRun {
        let prefix = "balanced-\(processes)-\(devices)-\(UUID().uuidString.prefix(8).lowercased())"
        let accounts = (0..<devices).map { "\(prefix)-d\($0)" }
        var servers: [ServerProcess] = []
        defer { for server in servers { server.stop() } }
        for _ in 0..<processes {
            servers.append(
                try ServerProcess(
                    anchorage: options.anchorage, store: postgres, accounts: accounts, folder: temporaryPath("server", "d")))
        }
        let nginx = try Balancer(script: options.nginxScript, upstreams: servers.map(\.url))
        defer { nginx.stop() }
        return try await fastSyncs(url: nginx.url, servers: servers, accounts: accounts, seconds: options.seconds)
    }

    // MARK: Fast syncs

    /// `accounts.count` devices, one per account, each saving one contact and syncing for `seconds`
    /// (``WireDevice``: Aquasync's wire over HTTP with JSON, one connection a device, on one event loop).
    static func fastSyncs(url: URL, servers: [ServerProcess], accounts: [String], seconds: Double) async throws -> FastSyncRun {
        let devices = try await WireDevices.connect(
            to: url, accounts: accounts, password: ServerProcess.password, group: loadGroup)
        let before = servers.map { $0.usage() }
        let clock = ContinuousClock()
        let began = clock.now
        let deadline = NIODeadline.now() + .milliseconds(Int64(seconds * 1_000))
        for device in devices { device.channel.pipeline.fireUserInboundEventTriggered(WireDevice.Start(deadline: deadline)) }
        var latencies: [Duration] = []
        for device in devices { latencies += try await device.finished.get() }
        let elapsed = began.duration(to: clock.now)
        let after = servers.map { $0.usage() }
        return FastSyncRun(
            latencies: latencies.sorted(), elapsed: elapsed.seconds,
            serverCPU: zip(before, after).map { $1.cpuSeconds - $0.cpuSeconds }.reduce(0, +),
            serverPeakRSS: after.map(\.peakRSS).max() ?? 0)
    }

    /// The devices' event loop: one thread, so that the load generator takes at most one of the cores the
    /// server shares with it.
    static let loadGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    // MARK: Upload and pull

    /// A copy of the SQLite device at `path` (its write-ahead log too, if one is left), to sync from.
    static func copyOfDevice(_ path: String) throws -> String {
        let copy = temporaryPath("upload-device", "sqlite")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        return copy
    }

    /// Times `anchorage sync` of the SQLite device at `device` with `account` on the server, which must
    /// print `expecting` (`pushed N` for an upload, `pulled N` for a pull), and samples both processes' RSS.
    static func syncWithCommandLine(
        device: String, server: ServerProcess, account: String, anchorage: String, expecting: String, records: Int
    ) throws -> BulkRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: anchorage)
        process.arguments = ["sync", "--server", server.url.absoluteString, "--user", account, "--store", "sqlite:" + device]
        process.environment = ProcessInfo.processInfo.environment.merging(["ANCHORAGE_PASSWORD": ServerProcess.password]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        flushToDisk()
        let before = server.usage()
        let began = ContinuousClock.now
        try process.run()
        let sampler = MemorySampler(pids: [server.pid, process.processIdentifier])
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let elapsed = began.duration(to: .now).seconds
        let peaks = sampler.stop()
        let after = server.usage()
        guard process.terminationStatus == 0 else { throw BenchmarkError("anchorage sync exited with \(process.terminationStatus)") }
        let line = String(decoding: text, as: UTF8.self)
        guard line.contains(expecting + ",") else { throw BenchmarkError("anchorage sync did not say \"\(expecting)\": \(line)") }
        return BulkRun(
            records: records, seconds: elapsed, serverCPU: after.cpuSeconds - before.cpuSeconds,
            serverPeakRSS: peaks[server.pid] ?? 0, devicePeakRSS: peaks[process.processIdentifier] ?? 0)
    }

    // MARK: Import

    /// Writes `contacts` as JSON Lines (the form `anchorage records list` prints) and times `anchorage records import` of them.
    /// - Returns: The seconds it took, the path of the SQLite device it filled, and the import's peak RSS.
    static func importWithCommandLine(_ contacts: [SyncValue], anchorage: String) throws -> (seconds: Double, device: String, peakRSS: Int) {
        let file = temporaryPath("contacts", "jsonl")
        var bytes: [UInt8] = []
        let codec = JSONCodec()
        for contact in contacts {
            bytes += try codec.encode(["fields": listed(contact)])
            bytes.append(UInt8(ascii: "\n"))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: anchorage)
        let device = temporaryPath("import-device", "sqlite")
        process.arguments = ["records", "import", "Contact", file, "--store", "sqlite:" + device]
        process.standardOutput = FileHandle.nullDevice
        let began = ContinuousClock.now
        try process.run()
        let sampler = MemorySampler(pids: [process.processIdentifier])
        process.waitUntilExit()
        let elapsed = began.duration(to: .now).seconds
        let peaks = sampler.stop()
        guard process.terminationStatus == 0 else { throw BenchmarkError("anchorage records import exited with \(process.terminationStatus)") }
        return (elapsed, device, peaks[process.processIdentifier] ?? 0)
    }

    /// A value in the listed form of JSON files: dates as `{"$date": ISO 8601}`, data as `{"$data": base64}`.
    static func listed(_ value: SyncValue) -> SyncValue {
        switch value {
        case .date(let date): return ["$date": .string(date.formatted(.iso8601))]
        case .data(let bytes): return ["$data": .string(Data(bytes).base64EncodedString())]
        case .array(let values): return .array(values.map(listed))
        case .dictionary(let entries): return .dictionary(entries.mapValues(listed))
        default: return value
        }
    }
}

/// What the command line asked for.
struct Options {
    var anchorage: String
    var postgres: String?
    var devices = [10, 100, 1_000]
    var seconds = 10.0
    var contacts = 100_000
    /// How many runs each fast-sync figure is the median of.
    var repeats = 3
    var json: String?
    /// With `--postgres`: also fast syncs through nginx in front of this many processes, each count in turn.
    var processes: [Int] = []
    var nginxScript = "../scripts/with-nginx.sh"

    init(_ arguments: [String]) throws {
        func value(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        guard let anchorage = value("--anchorage") else {
            throw BenchmarkError(
                "usage: sync-load --anchorage PATH [--postgres URL [--processes 1,2,3] [--nginx-script PATH]] "
                    + "[--devices 10,100,1000] [--seconds 10] [--repeat 3] [--contacts 100000] [--json OUT]")
        }
        self.anchorage = anchorage
        postgres = value("--postgres")
        if let list = value("--devices") { devices = list.split(separator: ",").compactMap { Int($0) } }
        if let text = value("--seconds"), let seconds = Double(text) { self.seconds = seconds }
        if let text = value("--contacts"), let contacts = Int(text) { self.contacts = contacts }
        if let text = value("--repeat"), let repeats = Int(text) { self.repeats = repeats }
        json = value("--json")
        if let list = value("--processes") { processes = list.split(separator: ",").compactMap { Int($0) } }
        if let script = value("--nginx-script") { nginxScript = script }
    }
}

/// A throwaway nginx in front of servers (scripts/with-nginx.sh), round-robin.
final class Balancer {
    let folder = temporaryPath("nginx", "d")
    let url: URL
    private let script: String

    init(script: String, upstreams: [URL]) throws {
        self.script = script
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = ["--start", folder, String(getpid())]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "ANCHORAGE_NGINX_UPSTREAMS": upstreams.map { "\($0.host ?? "127.0.0.1"):\($0.port ?? 80)" }.joined(separator: " ")
        ]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The script leaves a watcher running that holds standard output open: read up to the port's line.
        var text = ""
        var port: Int?
        while port == nil {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            port = text.split(separator: "\n").compactMap { Int($0) }.last
        }
        // Not `waitUntilExit()`: it spins a run loop, which never returns on this process's event-loop executor.
        var status: Int32 = 0
        _ = waitpid(process.processIdentifier, &status, 0)
        guard let port else { throw BenchmarkError("nginx did not start: \(text)") }
        url = URL(string: "http://127.0.0.1:\(port)")!
    }

    func stop() {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = ["--stop", folder]
        guard (try? process.run()) != nil else { return }
        var status: Int32 = 0
        _ = waitpid(process.processIdentifier, &status, 0)
    }
}

/// A failure the benchmark reports in one line.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The figures of a run, by name, written as one JSON object for `performance.sh`.
struct Results {
    var values: [String: Double] = [:]

    mutating func add(_ prefix: String, _ median: FastSyncMedians) {
        values["\(prefix).syncs_per_s"] = median.syncsPerSecond
        values["\(prefix).p50_ms"] = median.p50 * 1_000
        values["\(prefix).p99_ms"] = median.p99 * 1_000
        values["\(prefix).server_cpu_ms_per_sync"] = median.cpuPerSync * 1_000
        values["\(prefix).server_rss_mb"] = Double(median.serverPeakRSS) / 1_048_576
        values["\(prefix).runs"] = Double(median.runs)
    }

    mutating func add(_ prefix: String, _ run: BulkRun) {
        values["\(prefix).records_per_s"] = Double(run.records) / run.seconds
        values["\(prefix).seconds"] = run.seconds
        values["\(prefix).server_cpu_s"] = run.serverCPU
        values["\(prefix).server_rss_mb"] = Double(run.serverPeakRSS) / 1_048_576
        values["\(prefix).device_rss_mb"] = Double(run.devicePeakRSS) / 1_048_576
    }

    func write(to path: String) throws {
        let body = values.keys.sorted().map { "  \"\($0)\": \(format(values[$0]!, 3))" }.joined(separator: ",\n")
        try Data("{\n\(body)\n}\n".utf8).write(to: URL(fileURLWithPath: path))
    }
}

/// One fast-sync run.
struct FastSyncRun {
    /// Every timed sync's duration, shortest first.
    let latencies: [Duration]
    let elapsed: Double
    let serverCPU: Double
    let serverPeakRSS: Int

    var syncsPerSecond: Double { Double(latencies.count) / elapsed }
    var cpuPerSync: Double { serverCPU / Double(max(1, latencies.count)) }

    func percentile(_ p: Double) -> Double {
        latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))].seconds
    }

    func line(store: String, devices: Int) -> String { FastSyncMedians([self]).line(store: store, devices: devices) }
}

/// The medians of several fast-sync runs of one configuration, figure by figure, and the highest peak RSS.
struct FastSyncMedians {
    let runs: Int
    let syncsPerSecond: Double
    let p50: Double
    let p99: Double
    let cpuPerSync: Double
    let serverPeakRSS: Int

    init(_ runs: [FastSyncRun]) {
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        self.runs = runs.count
        syncsPerSecond = median(runs.map(\.syncsPerSecond))
        p50 = median(runs.map { $0.percentile(0.5) })
        p99 = median(runs.map { $0.percentile(0.99) })
        cpuPerSync = median(runs.map(\.cpuPerSync))
        serverPeakRSS = runs.map(\.serverPeakRSS).max() ?? 0
    }

    /// The figures in one line; "median of N runs" when there were several.
    func line(store: String, devices: Int) -> String {
        "\(store), \(devices) devices\(runs > 1 ? ", median of \(runs) runs" : ""): \(Int(syncsPerSecond)) syncs/s, "
            + "p50 \(format(p50 * 1_000, 1)) ms, "
            + "p99 \(format(p99 * 1_000, 1)) ms, server CPU \(format(cpuPerSync * 1_000_000, 0)) µs a sync, "
            + "server peak RSS \(serverPeakRSS / 1_048_576) MB"
    }
}

/// Writes every file's changed pages to the disk (`sync(2)`), so that a run does not share the disk with
/// the writes of the one before (an import leaves some 100 MB to write back).
func flushToDisk() {
    #if canImport(Glibc)
    Glibc.sync()
    #endif
}

/// One upload or pull of many records.
struct BulkRun {
    let records: Int
    let seconds: Double
    let serverCPU: Double
    let serverPeakRSS: Int
    let devicePeakRSS: Int

    /// The run of median time, with the highest peak RSS of all the runs.
    static func median(of runs: [BulkRun]) -> BulkRun {
        let sorted = runs.sorted { $0.seconds < $1.seconds }
        let middle = sorted[sorted.count / 2]
        return BulkRun(
            records: middle.records, seconds: middle.seconds, serverCPU: middle.serverCPU,
            serverPeakRSS: runs.map(\.serverPeakRSS).max() ?? 0, devicePeakRSS: runs.map(\.devicePeakRSS).max() ?? 0)
    }

    func line(store: String, what: String) -> String {
        "\(store), \(what) of \(records) contacts: \(format(seconds, 2)) s, \(Int(Double(records) / seconds)) records/s, "
            + "server CPU \(format(serverCPU, 2)) s, peak RSS server \(serverPeakRSS / 1_048_576) MB, device \(devicePeakRSS / 1_048_576) MB"
    }
}

func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }

/// The folder every file of a run goes in (servers' stores and users, devices' stores, the import file);
/// `main` removes it when the run ends.
let scratchFolder: String = {
    let folder = NSTemporaryDirectory() + "sync-load-\(UUID().uuidString)"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}()

func temporaryPath(_ name: String, _ ext: String) -> String {
    scratchFolder + "/\(name)-\(UUID().uuidString).\(ext)"
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
