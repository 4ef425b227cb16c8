import SyncTesting

/// A Python program that serves as an independent implementation of a format
/// in the interop tests: run as `python3 -c SOURCE COMMAND ARGUMENTS…`, it
/// reads lines on standard input and prints lines, with bytes as hex.
///
/// ```swift
/// let python = PythonProgram(script, requiring: ["json"])
/// let report = try await python.check(["check"], input: lines)   // "agreed N" + one line per disagreement
/// ```
public struct PythonProgram: Sendable {
    /// The program's source.
    public let source: String
    /// The modules it imports, checked by ``isAvailable()``.
    public let modules: [String]

    /// A program with its source and the modules it needs.
    public init(_ source: String, requiring modules: [String]) {
        self.source = source
        self.modules = modules
    }

    /// Whether `python3` with ``modules`` runs here; interop suites are enabled by it.
    public func isAvailable() async -> Bool {
        let imports = "import " + (modules.isEmpty ? "sys" : modules.joined(separator: ", "))
        return (try? await ChildProcess.run("python3", arguments: ["-c", imports]))?.status == 0
    }

    /// Runs the program with `arguments`, feeding it `input`, and returns what it printed.
    /// - Throws: ``PythonFailure`` when it cannot start or exits with a failure.
    public func run(_ arguments: [String], input: [UInt8] = []) async throws -> String {
        String(decoding: try await output(arguments, input: input), as: UTF8.self)
    }

    /// Runs the program as ``run(_:input:)`` does and returns its output as bytes.
    public func output(_ arguments: [String], input: [UInt8] = []) async throws -> [UInt8] {
        let outcome = try await ChildProcess.run("python3", arguments: ["-c", source] + arguments, input: input)
        guard outcome.status == 0 else {
            throw PythonFailure(
                "python \(arguments.first ?? "") failed (\(outcome.status)): \(outcome.errorText.suffix(2_000))")
        }
        return outcome.standardOutput
    }

    /// Runs a command that prints `agreed N` and one line per disagreement.
    public func check(_ arguments: [String], input: [UInt8]) async throws -> PythonCheckReport {
        PythonCheckReport(parsing: try await run(arguments, input: input))
    }

    /// Runs a command that prints one hex line per byte string.
    public func hexLines(_ arguments: [String], input: [UInt8] = []) async throws -> [[UInt8]] {
        try await output(arguments, input: input).split(separator: UInt8(ascii: "\n")).map { try Hex.decode($0) }
    }
}

/// What a `check` command reported: how many items agreed, and a description
/// of each that did not.
public struct PythonCheckReport: Sendable {
    /// How many items agreed (-1 when the count line was unreadable).
    public var agreed: Int
    /// One line per item that did not agree.
    public var disagreements: [String]

    /// Reads the `agreed N` line and the disagreement lines of a check's output.
    public init(parsing output: String) {
        agreed = 0
        disagreements = []
        for line in output.split(separator: "\n") {
            if line.hasPrefix("agreed ") {
                agreed = Int(line.dropFirst("agreed ".count)) ?? -1
            } else {
                disagreements.append(String(line))
            }
        }
    }
}

/// Python could not be run, or answered something unexpected.
public struct PythonFailure: Error, CustomStringConvertible {
    /// What happened.
    public var description: String
    /// Makes a failure.
    public init(_ description: String) { self.description = description }
}
