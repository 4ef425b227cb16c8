internal import CAnchorageMsgPackShim
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Writes a ``SyncValue`` as MessagePack through msgpack-c's packer, into a
/// buffer the C side owns until ``finish()`` copies it out.
struct MessagePackWriter: ~Copyable {
    /// The C writer: an `msgpack_packer` over an `msgpack_sbuffer`.
    private let writer: OpaquePointer
    /// The deepest nesting of arrays and dictionaries allowed.
    private let maxDepth: Int

    /// Makes a writer whose buffer starts with room for `capacity` bytes.
    /// - Throws: ``CodecError/Code/backendFailure`` when out of memory.
    init(maxDepth: Int, capacity: Int) throws(CodecError) {
        guard let writer = anch_mp_writer_new(capacity) else {
            throw CodecError(.backendFailure, "out of memory for the MessagePack writer")
        }
        self.writer = writer
        self.maxDepth = maxDepth
    }

    deinit { anch_mp_writer_free(writer) }

    /// The bytes written.
    /// - Throws: ``CodecError/Code/backendFailure`` when a write ran out of memory.
    consuming func finish() throws(CodecError) -> [UInt8] {
        guard !anch_mp_writer_failed(writer) else {
            throw CodecError(.backendFailure, "out of memory while writing MessagePack")
        }
        let count = anch_mp_writer_size(writer)
        guard count > 0, let start = anch_mp_writer_data(writer) else { return [] }
        return [UInt8](UnsafeBufferPointer(start: start, count: count))
    }

    /// Appends `value`, nested in `depth` containers.
    mutating func write(_ value: SyncValue, depth: Int) throws(CodecError) {
        switch value {
        case .null: anch_mp_write_nil(writer)
        case .bool(let flag): anch_mp_write_bool(writer, flag)
        case .integer(let integer): anch_mp_write_int64(writer, integer)
        case .unsignedInteger(let integer): anch_mp_write_uint64(writer, integer)
        case .real(let real): anch_mp_write_double(writer, real)
        case .string(let string): try writeString(string)
        case .date(let date):
            guard let (seconds, nanoseconds) = MessagePackTimestamp.parts(of: date) else {
                throw .unsupportedValue(
                    "\(CodecError.describing(date)) has no exact MessagePack timestamp"
                        + " (it must be finite, within ±2^52 s of 1970 and a whole number of nanoseconds)")
            }
            anch_mp_write_timestamp(writer, seconds, nanoseconds)
        case .data(let bytes):
            try checkLength(bytes.count, of: "data")
            bytes.withUnsafeBufferPointer { anch_mp_write_bin(writer, $0.baseAddress, $0.count) }
        case .array(let elements):
            try enterContainer(depth: depth)
            try checkLength(elements.count, of: "an array")
            anch_mp_write_array(writer, UInt32(truncatingIfNeeded: elements.count))
            for element in elements { try write(element, depth: depth + 1) }
        case .dictionary(let entries):
            try enterContainer(depth: depth)
            try checkLength(entries.count, of: "a dictionary")
            anch_mp_write_map(writer, UInt32(truncatingIfNeeded: entries.count))
            if entries.count == 1, let entry = entries.first {
                try writeString(entry.key)
                try write(entry.value, depth: depth + 1)
            } else {
                for index in KeyOrder.sortedIndices(of: entries) {
                    let (key, value) = entries[index]
                    try writeString(key)
                    try write(value, depth: depth + 1)
                }
            }
        }
    }

    /// Appends a str with the string's UTF-8 bytes, read in place when the string is contiguous.
    private mutating func writeString(_ string: String) throws(CodecError) {
        let utf8 = string.utf8
        try checkLength(utf8.count, of: "a string")
        let writer = self.writer
        let written: Void? = utf8.withContiguousStorageIfAvailable { anch_mp_write_str(writer, $0.baseAddress, $0.count) }
        if written == nil {
            var contiguous = string
            contiguous.withUTF8 { anch_mp_write_str(writer, $0.baseAddress, $0.count) }
        }
    }

    /// Refuses a str, bin, array or map too long for MessagePack's 32-bit lengths.
    private func checkLength(_ count: Int, of what: String) throws(CodecError) {
        if count > Int(UInt32.max) {
            throw .unsupportedValue("\(what) of \(count) elements is longer than MessagePack's limit of 2^32 - 1")
        }
    }

    /// Refuses to open a container past the depth limit.
    private func enterContainer(depth: Int) throws(CodecError) {
        if depth >= maxDepth {
            throw .limitExceeded("value nested deeper than \(maxDepth) levels")
        }
    }
}
