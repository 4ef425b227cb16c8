import Foundation
import SyncCore
import SyncHTTPServer
#if canImport(Glibc)
import Glibc
#endif

/// An `anchorage serve` child process on a free loopback port, with a users file of `accounts`.
public final class ServerProcess: Sendable {
    /// Every account's password. Its hash takes few PBKDF2 rounds so that a thousand accounts are made in
    /// moments; the server remembers a verified password, so later requests never derive it again.
    public static let password = "secret"

    /// The running `anchorage serve`.
    public let process: Process
    /// Where it listens: `http://127.0.0.1:PORT`.
    public let url: URL
    /// Its process ID.
    public var pid: Int32 { process.processIdentifier }

    /// Starts `anchorage serve` (the binary at `anchorage`) on `store`, its users file in `folder` (made if
    /// missing), with `extraArguments` after the standard ones; returns once it prints its address.
    public init(
        anchorage: String, store: String, accounts: [String], folder: String, extraArguments: [String] = []
    ) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let users = folder + "/users.txt"
        var file = UsersFile()
        for account in accounts {
            file = try file.adding(account: AccountID(account), password: Self.password, iterations: 1_000)
        }
        try file.write(to: URL(fileURLWithPath: users))
        process = Process()
        process.executableURL = URL(fileURLWithPath: anchorage)
        process.arguments = [
            "serve", "--port", "0", "--store", store, "--users", users, "--log-level", "error",
            "--max-connections", String(max(256, accounts.count * 2)),
        ] + extraArguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let address = text.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
            let url = URL(string: String(address.trimmingCharacters(in: .whitespacesAndNewlines)))
        else {
            process.terminate()
            throw ServerProcessError(description: "anchorage serve did not print its address: \(text)")
        }
        self.url = url
    }

    /// Stops the server and waits for it to exit.
    public func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    /// The server's CPU time so far (user and system, from /proc/PID/stat) and its peak RSS (VmHWM).
    public func usage() -> (cpuSeconds: Double, peakRSS: Int) {
        (cpuSeconds(of: pid), ProcessMemory(pid: pid).peak)
    }
}

/// User and system CPU time of a process, from /proc/PID/stat.
public func cpuSeconds(of pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A process's resident memory now and at its peak, from /proc/PID/status.
public struct ProcessMemory {
    /// Resident bytes now (VmRSS).
    public var current = 0
    /// The most resident bytes so far (VmHWM).
    public var peak = 0

    /// Reads the memory of process `pid` (zeros when it cannot be read).
    public init(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return }
        for line in text.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { continue }
            if parts[0] == "VmRSS:" { current = kilobytes * 1_024 }
            if parts[0] == "VmHWM:" { peak = kilobytes * 1_024 }
        }
    }
}

/// Follows processes' resident memory every 20 ms on a thread of its own, keeping each one's peak
/// (VmHWM when the process still runs, the largest VmRSS seen otherwise).
public final class MemorySampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peaks: [Int32: Int] = [:]
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    /// Starts following `pids`.
    public init(pids: [Int32]) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                for pid in pids {
                    let memory = ProcessMemory(pid: pid)
                    let seen = max(memory.current, memory.peak)
                    lock.withLock { peaks[pid] = max(peaks[pid] ?? 0, seen) }
                }
                usleep(20_000)
            }
            done.signal()
        }
    }

    /// Stops sampling and returns each process's peak resident bytes.
    public func stop() -> [Int32: Int] {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { peaks }
    }
}

/// `anchorage serve` did not start as expected.
public struct ServerProcessError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(description: String) { self.description = description }
}
