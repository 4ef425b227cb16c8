#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

extension JSONWriter {
    /// Appends `document` as ``write(_:depth:)`` appends its ``StoredFieldsDocument/value()``, writing the
    /// stored fields from their stored form.
    mutating func write(_ document: StoredFieldsDocument) throws {
        try enterContainer(depth: 0)
        var keys = Array(document.storedArrays.keys)
        keys += document.values.keys.filter { document.storedArrays[$0] == nil }
        keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        output.append(JSONByte.openBrace)
        for (position, key) in keys.enumerated() {
            if position > 0 { output.append(JSONByte.comma) }
            writeString(key)
            output.append(JSONByte.colon)
            if let items = document.storedArrays[key] {
                try enterContainer(depth: 1)
                output.append(JSONByte.openBracket)
                for (index, item) in items.enumerated() {
                    if index > 0 { output.append(JSONByte.comma) }
                    try write(item, depth: 2)
                }
                output.append(JSONByte.closeBracket)
            } else if let value = document.values[key] {
                try write(value, depth: 1)
            }
        }
        output.append(JSONByte.closeBrace)
    }

    /// Appends one record's stored fields as a dictionary nested in `depth` containers, merging
    /// `fields.added` into the stored keys' order (both sorted by UTF-8 bytes).
    private mutating func write(_ fields: StoredFields, depth: Int) throws {
        try enterContainer(depth: depth)
        var reader = StoredValueFormat.Reader(bytes: [UInt8](fields.blob))
        try reader.readFormatByte()
        guard try reader.readTag() == .dictionary else { throw StoreError(.corrupt, "stored record fields are not a dictionary") }
        let count = try reader.readContainerCount(depth: 0)
        output.append(JSONByte.openBrace)
        var first = true
        var nextAdded = 0
        for _ in 0..<count {
            // The key is compared and written from the blob's bytes, never made a String.
            let key = try reader.readUTF8Range()
            var order = 1  // of the next added key against this one
            while nextAdded < fields.added.count {
                order = reader.compare(fields.added[nextAdded].key, toUTF8At: key)
                guard order < 0 else { break }
                try writeEntry(fields.added[nextAdded].key, fields.added[nextAdded].value, depth: depth, first: &first)
                nextAdded += 1
            }
            let isReplaced = nextAdded < fields.added.count && order == 0
            if isReplaced || fields.omitted.contains(where: { reader.compare($0, toUTF8At: key) == 0 }) {
                try reader.skipValue(depth: 1)
                continue
            }
            if !first { output.append(JSONByte.comma) }
            first = false
            reader.withUTF8(key) { writeString(utf8: $0) }
            output.append(JSONByte.colon)
            try writeStored(&reader, depth: depth + 1, storedDepth: 1)
        }
        while nextAdded < fields.added.count {
            try writeEntry(fields.added[nextAdded].key, fields.added[nextAdded].value, depth: depth, first: &first)
            nextAdded += 1
        }
        try reader.requireEnd()
        output.append(JSONByte.closeBrace)
    }

    /// Appends `key: value` to a dictionary nested in `depth` containers, after a comma unless it is the `first` entry.
    private mutating func writeEntry(_ key: String, _ value: SyncValue, depth: Int, first: inout Bool) throws(CodecError) {
        if !first { output.append(JSONByte.comma) }
        first = false
        writeString(key)
        output.append(JSONByte.colon)
        try write(value, depth: depth + 1)
    }

    /// Appends the next stored value of `reader`, nested in `depth` containers of the output and in
    /// `storedDepth` of its blob.
    private mutating func writeStored(_ reader: inout StoredValueFormat.Reader, depth: Int, storedDepth: Int) throws {
        switch try reader.readTag() {
        case .null: appendASCII("null")
        case .falseValue: appendASCII("false")
        case .trueValue: appendASCII("true")
        case .integer: writeInteger(try reader.readInteger())
        case .unsignedInteger: output.appendDecimal(try reader.readVarint())
        case .real: try writeReal(try reader.readReal())
        case .string: try reader.readUTF8 { utf8 in writeString(utf8: utf8) }
        case .date:
            let date = try reader.readDate()
            output.append(JSONByte.quote)
            try ISO8601DateWriting.append(date, to: &output)
            output.append(JSONByte.quote)
        case .data:
            let data = try reader.readData()
            output.append(JSONByte.quote)
            data.withUnsafeBytes { output.appendBase64($0.assumingMemoryBound(to: UInt8.self)) }
            output.append(JSONByte.quote)
        case .array: try writeStoredContainer(&reader, keyed: false, depth: depth, storedDepth: storedDepth)
        case .dictionary: try writeStoredContainer(&reader, keyed: true, depth: depth, storedDepth: storedDepth)
        }
    }

    /// Appends the stored array, or with `keyed` the stored dictionary, that `reader` is at: its entries
    /// between brackets (braces), separated by commas. It is nested in `depth` containers of the output and
    /// in `storedDepth` of its blob.
    private mutating func writeStoredContainer(
        _ reader: inout StoredValueFormat.Reader, keyed: Bool, depth: Int, storedDepth: Int
    ) throws {
        let count = try reader.readContainerCount(depth: storedDepth)
        try enterContainer(depth: depth)
        output.append(keyed ? JSONByte.openBrace : JSONByte.openBracket)
        for index in 0..<count {
            if index > 0 { output.append(JSONByte.comma) }
            if keyed {
                try reader.readUTF8 { utf8 in writeString(utf8: utf8) }
                output.append(JSONByte.colon)
            }
            try writeStored(&reader, depth: depth + 1, storedDepth: storedDepth + 1)
        }
        output.append(keyed ? JSONByte.closeBrace : JSONByte.closeBracket)
    }
}
