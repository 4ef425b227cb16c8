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
        try best(of: repetitions, [operation])[0]
    }

    /// Runs each of `operations` once to warm up, then `repetitions` rounds of each in turn; keeps each
    /// one's best. Operations compared with each other are timed in the same rounds, so that both see the
    /// machine as it is (its speed wanders from minute to minute), not one of them a minute later.
    public static func best(of repetitions: Int, _ operations: [CodecOperation]) throws -> [Timing] {
        let clock = ContinuousClock()
        for operation in operations { _ = try operation.run() }
        var best = [Duration](repeating: .seconds(Int64.max), count: operations.count)
        var sinks = [Int](repeating: 0, count: operations.count)
        for _ in 0..<max(1, repetitions) {
            for (index, operation) in operations.enumerated() {
                let start = clock.now
                sinks[index] &+= try operation.run()
                best[index] = min(best[index], clock.now - start)
            }
        }
        return try operations.indices.map { index in
            guard sinks[index] != 0 else {
                throw TimingFailure(description: "\(operations[index].subject) produced nothing")
            }
            let (seconds, attoseconds) = best[index].components
            return Timing(seconds: Double(seconds) + Double(attoseconds) / 1e18, bytes: operations[index].documentBytes)
        }
    }
}

/// An operation whose result shows it did no work.
public struct TimingFailure: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
}
