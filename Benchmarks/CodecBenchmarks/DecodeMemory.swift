// Decode memory: the most heap a decode holds at once, against the encoded size
// and the decoded value it returns. Counted by ordo-one's malloc interposer,
// which `swift package benchmark` preloads.

import Benchmark
import BenchmarkShapes
import Foundation
import MallocInterposerSwift
import Synchronization
import SyncBinaryPlist
import SyncCore
import SyncJSON
import SyncMessagePack
import SyncXMLPlist

/// The most heap held at once during the decode, above what was held before it, in KiB.
let decodePeakHeap = BenchmarkMetric.custom("decode peak heap (KiB)", polarity: .prefersSmaller, useScalingFactor: false)
/// The heap the decoded value still holds once the decode returns, in KiB.
let decodedValueHeap = BenchmarkMetric.custom("decoded value (KiB)", polarity: .prefersSmaller, useScalingFactor: false)
/// (peak − decoded value) / encoded size, in hundredths: the decoder's working memory per byte read.
let decodeOverhead = BenchmarkMetric.custom(
    "decode overhead / encoded size (x100)", polarity: .prefersSmaller, useScalingFactor: false)
/// The most overhead the target allows, in hundredths.
let decodeOverheadTarget = BenchmarkMetric.custom(
    "overhead target (x100)", polarity: .prefersSmaller, useScalingFactor: false)

/// The target: a decode holds at most 3× the encoded size on top of the value it returns.
let decodeOverheadLimit = 3.0

extension CodecSubject {
    /// The decoders whose memory is measured: Anchorage's four codecs (which
    /// carry the target) and the untyped Foundation peers for reference.
    static let decodeMemorySubjects: [CodecSubject] = [
        .anchorageXMLPlist, .anchorageBinaryPlist, .anchorageJSON, .anchorageMessagePack, .anchorageMessagePackDocument,
        .propertyListSerializationXML, .propertyListSerializationBinary, .jsonSerialization,
    ]

    /// Encodes the shape in the subject's format and returns the bytes and a
    /// decode that returns the decoded value (kept alive by the caller).
    func prepare(_ shape: BenchmarkShape) throws -> (bytes: Int, decode: () throws -> Any) {
        switch self {
        case .anchorageXMLPlist: return try anchorage(XMLPlistCodec(), shape)
        case .anchorageBinaryPlist: return try anchorage(BinaryPlistCodec(), shape)
        case .anchorageJSON: return try anchorage(JSONCodec(), shape)
        case .anchorageMessagePack: return try anchorage(MessagePackCodec(), shape)
        case .anchorageMessagePackDocument:
            let codec = MessagePackCodec()
            let bytes = try codec.encode(shape.value)
            return (bytes.count, { try codec.decodeDocument(bytes) })
        case .propertyListSerializationXML, .propertyListSerializationBinary:
            let format: PropertyListSerialization.PropertyListFormat =
                self == .propertyListSerializationXML ? .xml : .binary
            let data = try PropertyListSerialization.data(
                fromPropertyList: FoundationValues.propertyList(shape.value), format: format, options: 0)
            return (data.count, { try PropertyListSerialization.propertyList(from: data, options: [], format: nil) })
        case .jsonSerialization:
            let data = try JSONSerialization.data(
                withJSONObject: FoundationValues.json(shape.value), options: [.sortedKeys])
            return (data.count, { try JSONSerialization.jsonObject(with: data) })
        default:
            throw NotMeasured(subject: self)
        }
    }

    private func anchorage(_ codec: some SyncCodec, _ shape: BenchmarkShape) throws -> (Int, () throws -> Any) {
        let bytes = try codec.encode(shape.value)
        return (bytes.count, { try codec.decode(bytes) })
    }
}

/// What one decode held.
struct DecodeMemory {
    /// The most heap held at once during the decode, above the start.
    var peakBytes: Int
    /// The heap still held when the decode returned: the decoded value.
    var valueBytes: Int

    /// Heap the decoder needed beyond the value it returned.
    var overheadBytes: Int { max(0, peakBytes - valueBytes) }

    /// Runs `decode` once with the interposer counting, following the live heap
    /// (bytes allocated minus bytes freed) at every allocation.
    static func measure(_ decode: () throws -> Any) throws -> DecodeMemory {
        MallocInterposerSwift.unhook()
        MallocInterposerSwift.reset()
        highestLiveBytes.store(0, ordering: .relaxed)
        MallocInterposerSwift.setAllocationHook(recordLiveBytes)
        MallocInterposerSwift.hook()
        let value = try decode()
        MallocInterposerSwift.unhook()
        MallocInterposerSwift.setAllocationHook(nil)
        let end = MallocInterposerSwift.getStatistics()
        let memory = DecodeMemory(
            peakBytes: highestLiveBytes.load(ordering: .relaxed),
            valueBytes: end.mallocBytesCount - end.freeBytesCount)
        withExtendedLifetime(value) {}
        guard memory.peakBytes > 0 else { throw InterposerNotLoaded() }
        return memory
    }
}

/// The highest live heap seen since the measurement began.
private let highestLiveBytes = Atomic<Int>(0)

/// Called by the interposer after each counted allocation: the live heap can
/// only reach a new high right after an allocation.
private let recordLiveBytes: MallocInterposerSwift.AllocationHook = { _ in
    let statistics = MallocInterposerSwift.getStatistics()
    let live = statistics.mallocBytesCount - statistics.freeBytesCount
    var seen = highestLiveBytes.load(ordering: .relaxed)
    while live > seen {
        let exchange = highestLiveBytes.compareExchange(expected: seen, desired: live, ordering: .relaxed)
        if exchange.exchanged { break }
        seen = exchange.original
    }
}

/// A subject outside ``CodecSubject/decodeMemorySubjects``.
struct NotMeasured: Error, CustomStringConvertible {
    var subject: CodecSubject
    var description: String { "\(subject): decode memory is not measured" }
}

/// The malloc interposer is not loaded: run through `swift package benchmark`, which preloads it.
struct InterposerNotLoaded: Error, CustomStringConvertible {
    var description: String { "the malloc interposer is not loaded; run with `swift package benchmark`" }
}

/// Registers `memory <subject> decode <shape>` for every memory subject and shape.
func registerDecodeMemoryBenchmarks() {
    for shape in BenchmarkShape.allCases {
        for subject in CodecSubject.decodeMemorySubjects {
            let metrics = [decodePeakHeap, decodedValueHeap, decodeOverhead]
                + (subject.isAnchorage ? [decodeOverheadTarget] : [])
            Benchmark(
                "memory \(subject) decode \(shape)",
                configuration: .init(metrics: metrics, warmupIterations: 1, maxDuration: .seconds(30), maxIterations: 3)
            ) { benchmark in
                let prepared = try subject.prepare(shape)
                let memory = try DecodeMemory.measure(prepared.decode)
                benchmark.measurement(decodePeakHeap, memory.peakBytes / 1024)
                benchmark.measurement(decodedValueHeap, memory.valueBytes / 1024)
                benchmark.measurement(decodeOverhead, memory.overheadBytes * 100 / prepared.bytes)
                if subject.isAnchorage {
                    benchmark.measurement(decodeOverheadTarget, Int(decodeOverheadLimit * 100))
                }
            }
        }
    }
}
