// Encode and decode benchmarks of Anchorage's four codecs and their peers on
// the two standard shapes. Run with `swift package benchmark` in this folder.

import Benchmark
import BenchmarkShapes

/// The size of the document each benchmark writes or reads, in the subject's format.
let encodedBytes = BenchmarkMetric.custom("encoded bytes", polarity: .prefersSmaller, useScalingFactor: false)

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
    }
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
