// Encode and decode benchmarks of Anchorage's four codecs and their peers on
// the two standard shapes, the speed ratios against the peers with their
// targets, and the decode memory with its target. Run with
// `swift package benchmark` in this folder.

import Benchmark
import BenchmarkShapes

/// The size of the document each benchmark writes or reads, in the subject's format.
let encodedBytes = BenchmarkMetric.custom("encoded bytes", polarity: .prefersSmaller, useScalingFactor: false)
/// Peer time / Anchorage time on the same document, in hundredths (250 = 2.5×: Anchorage is 2.5 times as fast).
let speedVersusPeer = BenchmarkMetric.custom("speed vs peer (x100)", polarity: .prefersLarger, useScalingFactor: false)
/// The least speed ratio that meets the target, in hundredths.
let targetSpeed = BenchmarkMetric.custom("target (x100)", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, encodedBytes],
        warmupIterations: 1,
        maxDuration: .seconds(3),
        maxIterations: 100
    )
    for shape in BenchmarkShape.allCases {
        for subject in CodecSubject.allCases {
            for direction in subject.directions {
                let prepared = PreparedOperation()
                Benchmark(
                    "\(subject) \(direction) \(shape)",
                    configuration: configuration,
                    closure: { benchmark in
                        let operation = try prepared.operation()
                        for _ in benchmark.scaledIterations {
                            blackHole(try operation.run())
                        }
                        benchmark.measurement(encodedBytes, operation.documentBytes)
                    },
                    setup: { prepared.value = try CodecOperation(subject, direction, shape) },
                    teardown: { prepared.value = nil }
                )
            }
        }
        // The ratios against the peers that have a target, timed in the same run (best of 5 each).
        for comparison in Comparison.all where comparison.target != nil {
            Benchmark(
                "ratio \(comparison.ours) vs \(comparison.peer) \(comparison.direction) \(shape)",
                configuration: .init(
                    metrics: [speedVersusPeer, targetSpeed], warmupIterations: 0, maxDuration: .seconds(60),
                    maxIterations: 1)
            ) { benchmark in
                let measured = try comparison.ratio(on: shape, repetitions: 5)
                benchmark.measurement(speedVersusPeer, Int((measured.ratio * 100).rounded()))
                benchmark.measurement(targetSpeed, Int(((comparison.target ?? 0) * 100).rounded()))
            }
        }
    }
    registerDecodeMemoryBenchmarks()
}

/// The operation a benchmark's setup prepares, outside the measurement.
final class PreparedOperation {
    var value: CodecOperation?

    func operation() throws -> CodecOperation {
        guard let value else { throw MissingSetup() }
        return value
    }
}

/// A benchmark ran before its setup.
struct MissingSetup: Error {}
