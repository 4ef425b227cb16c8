#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Runs another program to completion and collects what it printed.
///
/// Tests that check a codec against an independent implementation (Python's
/// `plistlib`, `json` or `msgpack`) or drive a helper script run many programs
/// at once from concurrent tests. `ChildProcess` starts each with
/// `posix_spawnp` and waits for exactly that child with `waitpid`, so any
/// number of them may run in parallel without sharing state. Standard input,
/// output and error go through temporary files, so a program that prints a
/// lot never blocks on a full pipe; the child keeps no other descriptor of the
/// test process (a server a test starts holds none of another test's sockets). Waiting for a program to exit happens on
/// a thread of its own, never on the cooperative pool that runs the tests'
/// tasks (two threads on a two-core machine): a test waiting for a slow
/// program does not hold up the other tests.
///
/// ```swift
/// let outcome = try await ChildProcess.run("python3", arguments: ["-c", "print(1 + 1)"])
/// #expect(outcome.status == 0 && outcome.outputText == "2\n")
///
/// // Prints "anchorage … serving on http://127.0.0.1:PORT (store …)" once it listens.
/// let server = try ChildProcess.start(
///     "anchorage", arguments: ["serve", "--port", "0", "--store", "memory", "--users", usersFile])
/// let url = try await server.waitForOutputLine { line in
///     line.split(separator: " ").first { $0.hasPrefix("http://") }.flatMap { URL(string: String($0)) }
/// }
/// try await server.terminate()
/// ```
public enum ChildProcess {
    /// How a program ended and what it printed.
    public struct Outcome: Sendable {
        /// The exit status, or `128 + signal` when a signal ended the program.
        public var status: Int32
        /// Everything the program wrote to standard output.
        public var standardOutput: [UInt8]
        /// Everything the program wrote to standard error.
        public var standardError: [UInt8]

        /// Standard output decoded as UTF-8.
        public var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Standard error decoded as UTF-8.
        public var errorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// Why a program could not be run.
    public struct LaunchError: Error, CustomStringConvertible {
        /// What failed, with the system's reason.
        public var description: String
        /// Makes an error saying what failed.
        public init(description: String) { self.description = description }
    }

    /// The path of an executable SwiftPM built beside the running test bundle
    /// (`.build/<triple>/debug/<name>`), or nil when there is none — for tests
    /// that run a package's own command-line tool.
    ///
    /// ```swift
    /// let tool = try #require(ChildProcess.builtExecutable(named: "anchorage"))
    /// let outcome = try await ChildProcess.run(tool, arguments: ["--version"])
    /// ```
    public static func builtExecutable(named name: String) -> String? {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = folder.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate.path }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    /// Runs `program` (a path, or a name looked up in `PATH`) with `arguments`,
    /// feeds it `input` on standard input, and waits until it exits.
    ///
    /// - Parameters:
    ///   - program: the program to run.
    ///   - arguments: its arguments, without the program name.
    ///   - input: the bytes the program reads on standard input.
    ///   - environment: extra environment variables, added to this process's own.
    ///   - workingDirectory: the folder the program runs in; this process's own when `nil`.
    /// - Returns: the exit status and the program's output.
    /// - Throws: ``LaunchError`` when the program cannot be started.
    public static func run(
        _ program: String, arguments: [String] = [], input: [UInt8] = [], environment: [String: String] = [:],
        workingDirectory: String? = nil
    ) async throws -> Outcome {
        let child = try start(
            program, arguments: arguments, input: input, environment: environment, workingDirectory: workingDirectory)
        let status = try await child.waitForExit()
        return Outcome(
            status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }

    /// Runs `program` as ``run(_:arguments:input:environment:workingDirectory:)``
    /// does, blocking the calling thread until it exits — only for places that
    /// cannot wait asynchronously, such as a static initializer or an `atexit`
    /// handler. Anywhere else use the `async` `run`.
    public static func runSynchronously(
        _ program: String, arguments: [String] = [], input: [UInt8] = [], environment: [String: String] = [:]
    ) throws -> Outcome {
        let child = try start(program, arguments: arguments, input: input, environment: environment)
        guard let status = try waitForExit(of: child.pid, program: program, block: true) else {
            throw LaunchError(description: "\(program) was not waited for")
        }
        child.exitStatus.withLock { $0 = status }
        return Outcome(status: status, standardOutput: child.standardOutput, standardError: child.standardError)
    }

    /// Starts `program` and returns at once; the program runs until it exits
    /// or ``Running/terminate()`` stops it.
    ///
    /// - Parameters:
    ///   - program: the program to run (a path, or a name looked up in `PATH`).
    ///   - arguments: its arguments, without the program name.
    ///   - input: the bytes the program reads on standard input.
    ///   - environment: extra environment variables, added to this process's own.
    ///   - workingDirectory: the folder the program runs in; this process's own when `nil`.
    /// - Returns: the running program.
    /// - Throws: ``LaunchError`` when the program cannot be started.
    public static func start(
        _ program: String, arguments: [String] = [], input: [UInt8] = [], environment: [String: String] = [:],
        workingDirectory: String? = nil
    ) throws -> Running {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("anchorage-child-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let inputPath = directory.appendingPathComponent("stdin").path
        let outputPath = directory.appendingPathComponent("stdout").path
        let errorPath = directory.appendingPathComponent("stderr").path
        try Data(input).write(to: URL(fileURLWithPath: inputPath))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The child keeps no other descriptor of this process: a test's listening socket inherited by a
        // server another test started (nginx, say) stays open after the test closes it, and a restart on
        // its port fails with "Address already in use" for as long as that server runs.
        _ = Self.addCloseFrom(&actions, 3)
        if let workingDirectory {
            guard Self.addChangeDirectory(&actions, workingDirectory) == 0 else {
                throw LaunchError(description: "cannot run \(program) in \(workingDirectory)")
            }
        }

        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, new in new }
        let argv = ([program] + arguments).map { strdup($0) }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") }
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, program, &actions, nil, argv + [nil], envp + [nil])
        guard spawned == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw LaunchError(description: "cannot run \(program): \(String(cString: strerror(spawned)))")
        }
        return Running(pid: pid, program: program, directory: directory)
    }

    /// `posix_spawn_file_actions_addchdir_np`, which every current C library
    /// has (glibc 2.29, macOS 10.15, musl 1.1.24) but Swift's Glibc module does
    /// not declare, so it is looked up by name.
    private static let addChangeDirectory:
        @Sendable (UnsafeMutablePointer<posix_spawn_file_actions_t>, String) -> Int32 = {
            typealias Function = @convention(c) (
                UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>
            ) -> Int32
            guard let symbol = libraryFunction("posix_spawn_file_actions_addchdir_np") else { return { _, _ in ENOSYS } }
            let function = unsafeBitCast(symbol, to: Function.self)
            return { actions, path in function(actions, path) }
        }()

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which Swift's Glibc module does not declare,
    /// looked up by name; where the C library has none, the child keeps the descriptors it inherits.
    private static let addCloseFrom: @Sendable (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
        typealias Function = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        guard let symbol = libraryFunction("posix_spawn_file_actions_addclosefrom_np") else { return { _, _ in ENOSYS } }
        let function = unsafeBitCast(symbol, to: Function.self)
        return { actions, lowest in function(actions, lowest) }
    }()

    /// The C library's function `name`, looked up in every library loaded.
    private static func libraryFunction(_ name: String) -> UnsafeMutableRawPointer? {
        #if canImport(Darwin)
        dlsym(UnsafeMutableRawPointer(bitPattern: -2), name)  // RTLD_DEFAULT
        #else
        dlsym(nil, name)  // RTLD_DEFAULT
        #endif
    }

    /// A program started by ``ChildProcess/start(_:arguments:input:environment:workingDirectory:)``.
    ///
    /// Its output collects in temporary files, removed when it has been waited for.
    public final class Running: Sendable {
        /// The program's process id.
        public let pid: pid_t
        private let program: String
        private let directory: URL
        fileprivate let exitStatus = Mutex<Int32?>(nil)

        fileprivate init(pid: pid_t, program: String, directory: URL) {
            self.pid = pid
            self.program = program
            self.directory = directory
        }

        /// Everything the program has written to standard output so far.
        public var standardOutput: [UInt8] { contents("stdout") }
        /// Everything the program has written to standard error so far.
        public var standardError: [UInt8] { contents("stderr") }

        /// Waits until standard output contains a line for which `match`
        /// returns a value, and returns that value.
        /// - Throws: ``LaunchError`` when the program exits first or `timeout` passes.
        public func waitForOutputLine<T>(
            timeout: Duration = .seconds(60), _ match: (Substring) -> T?
        ) async throws -> T {
            let deadline = ContinuousClock.now + timeout
            while true {
                // The output is read before the deadline is checked: a task that was not scheduled
                // for a while (a busy machine) still sees a line printed in the meantime.
                let text = String(decoding: standardOutput, as: UTF8.self)
                for line in text.split(separator: "\n") {
                    if let found = match(line) { return found }
                }
                if hasExited() {
                    throw LaunchError(
                        description: "\(program) exited before printing the expected line; it printed: "
                            + text + String(decoding: standardError, as: UTF8.self))
                }
                guard ContinuousClock.now < deadline else {
                    throw LaunchError(
                        description: "\(program) did not print the expected line within \(timeout); it printed: "
                            + text + String(decoding: standardError, as: UTF8.self))
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// Sends `signal` (such as `SIGKILL`) and returns at once, for a test
        /// where another task already waits for the program's exit
        /// (``waitForExit()``); nothing is sent once the program was seen to exit.
        public func send(_ signal: Int32) {
            if exitStatus.withLock({ $0 }) == nil { sendSignal(signal, to: pid) }
        }

        /// Sends `SIGTERM`, waits for the program to exit and returns its status.
        @discardableResult
        public func terminate() async throws -> Int32 {
            if exitStatus.withLock({ $0 }) == nil { sendSignal(SIGTERM, to: pid) }
            return try await waitForExit()
        }

        /// Sends `SIGKILL` — no chance to clean up, as when a machine loses
        /// power — waits for the program to end and returns its status.
        @discardableResult
        public func kill() async throws -> Int32 {
            if exitStatus.withLock({ $0 }) == nil { sendSignal(SIGKILL, to: pid) }
            return try await waitForExit()
        }

        /// Waits, on a thread of its own, for the program to exit and returns
        /// its status (see ``Outcome/status``).
        @discardableResult
        public func waitForExit() async throws -> Int32 {
            if let status = exitStatus.withLock({ $0 }) { return status }
            let (pid, program) = (pid, program)
            let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                Thread.detachNewThread {
                    continuation.resume(
                        with: Result {
                            guard let status = try ChildProcess.waitForExit(of: pid, program: program, block: true) else {
                                throw LaunchError(description: "\(program) was not waited for")
                            }
                            return status
                        })
                }
            }
            exitStatus.withLock { $0 = status }
            return status
        }

        deinit {
            if exitStatus.withLock({ $0 }) == nil {
                sendSignal(SIGKILL, to: pid)
                _ = try? ChildProcess.waitForExit(of: pid, program: program, block: true)
            }
            try? FileManager.default.removeItem(at: directory)
        }

        /// Whether the program has exited (reaping it if so).
        private func hasExited() -> Bool {
            if exitStatus.withLock({ $0 }) != nil { return true }
            guard let status = try? ChildProcess.waitForExit(of: pid, program: program, block: false) else {
                return false
            }
            exitStatus.withLock { $0 = status }
            return true
        }

        private func contents(_ name: String) -> [UInt8] {
            Array((try? Data(contentsOf: directory.appendingPathComponent(name))) ?? Data())
        }
    }

    /// Waits for the child `pid` (or, unless `block`, only checks whether it
    /// has exited) and turns its wait status into an exit status; `nil` when
    /// it still runs.
    fileprivate static func waitForExit(of pid: pid_t, program: String, block: Bool) throws -> Int32? {
        var waitStatus: Int32 = 0
        while true {
            let result = waitpid(pid, &waitStatus, block ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            guard errno == EINTR else {
                throw LaunchError(description: "cannot wait for \(program): \(String(cString: strerror(errno)))")
            }
        }
        let signal = waitStatus & 0x7f
        return signal == 0 ? (waitStatus >> 8) & 0xff : 128 + signal
    }
}

/// Sends `signal` to the process `pid` (the C library's `kill`, which the
/// `Running.kill()` method hides inside the class).
private func sendSignal(_ signal: Int32, to pid: pid_t) {
    kill(pid, signal)
}
