/// The best time of an operation over several runs.
public struct Timing: Sendable {
    /// The best run, in seconds.
    public let seconds: Double
    /// The bytes the operation writes or reads.
    public let bytes: Int

    /// The operation's bytes per second, in millions.
    public var megabytesPerSecond: Double { Double(bytes) / seconds / 1_000_000 }

    /// Runs `operation` once to warm up, then `repetitions` times; keeps the best.
    public static func best(of repetitions: Int, _ operation: CodecOperation) throws -> Timing {
        let clock = ContinuousClock()
        _ = try operation.run()
        var best = Duration.seconds(Int64.max)
        var sink = 0
        for _ in 0..<max(1, repetitions) {
            let start = clock.now
            sink &+= try operation.run()
            best = min(best, clock.now - start)
        }
        guard sink != 0 else { throw TimingFailure(description: "\(operation.subject) produced nothing") }
        let (seconds, attoseconds) = best.components
        return Timing(seconds: Double(seconds) + Double(attoseconds) / 1e18, bytes: operation.documentBytes)
    }
}

/// An operation whose result shows it did no work.
public struct TimingFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
}
