#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Writes a ``SyncValue`` as an XML property list, streaming into a byte array
/// with Apple's layout: the standard prologue, one element per line, tab indentation.
struct XMLPlistWriter {
    private(set) var output: [UInt8] = []
    private let maxDepth: Int

    static let prologue = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """.utf8)
    static let epilogue = Array("</plist>\n".utf8)

    init(maxDepth: Int, capacity: Int = 512) {
        self.maxDepth = maxDepth
        output.reserveCapacity(capacity)
    }

    /// Writes the whole document.
    mutating func writeDocument(_ value: SyncValue) throws(XMLPlistWriteFailure) {
        output.append(contentsOf: Self.prologue)
        try write(value, depth: 0)
        output.append(contentsOf: Self.epilogue)
    }

    /// Writes `value` on its own line(s), indented by `depth` tabs.
    private mutating func write(_ value: SyncValue, depth: Int) throws(XMLPlistWriteFailure) {
        indent(depth)
        switch value {
        case .string(let string):
            output.append(contentsOf: "<string>".utf8)
            try appendEscaped(string)
            output.append(contentsOf: "</string>\n".utf8)
        case .integer(let integer):
            appendElement("integer") { PlistNumberFormat.append(integer: integer, to: &$0) }
        case .unsignedInteger(let integer):
            appendElement("integer") { PlistNumberFormat.append(unsigned: integer, to: &$0) }
        case .real(let real):
            appendElement("real") { PlistNumberFormat.append(real: real, to: &$0) }
        case .bool(let bool):
            output.append(contentsOf: (bool ? "<true/>\n" : "<false/>\n").utf8)
        case .date(let date):
            let seconds = date.timeIntervalSince1970
            guard Double(PlistDateFormat.earliestSecond) <= seconds, seconds <= Double(PlistDateFormat.latestSecond) else {
                throw XMLPlistWriteFailure(
                    .unsupportedValue, "XML property lists carry dates of the years 0000 to 9999, not \(CodecError.describing(date))")
            }
            guard seconds.rounded(.down) == seconds else {
                throw XMLPlistWriteFailure(
                    .unsupportedValue, "XML property lists carry dates to the second; \(CodecError.describing(date)) has a fraction")
            }
            appendElement("date") { PlistDateFormat.append(seconds: Int64(seconds), to: &$0) }
        case .data(let bytes):
            output.append(contentsOf: "<data>\n".utf8)
            PlistBase64.appendLines(of: bytes, indent: depth, to: &output)
            indent(depth)
            output.append(contentsOf: "</data>\n".utf8)
        case .array(let elements):
            guard try openContainer("array", isEmpty: elements.isEmpty, depth: depth) else { return }
            for (index, element) in elements.enumerated() {
                do { try write(element, depth: depth + 1) } catch { throw error.inside(.index(index)) }
            }
            closeContainer("array", depth: depth)
        case .dictionary(let entries):
            guard try openContainer("dict", isEmpty: entries.isEmpty, depth: depth) else { return }
            for key in entries.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                indent(depth + 1)
                output.append(contentsOf: "<key>".utf8)
                do { try appendEscaped(key) } catch { throw error.inside(.key(key)) }
                output.append(contentsOf: "</key>\n".utf8)
                do { try write(entries[key]!, depth: depth + 1) } catch { throw error.inside(.key(key)) }
            }
            closeContainer("dict", depth: depth)
        case .null:
            throw XMLPlistWriteFailure(.unsupportedValue, "property lists cannot carry null")
        }
    }

    /// Appends `<tag>`, what `content` appends, and `</tag>` ending the line.
    private mutating func appendElement(_ tag: String, _ content: (inout [UInt8]) -> Void) {
        output.append(contentsOf: "<\(tag)>".utf8)
        content(&output)
        output.append(contentsOf: "</\(tag)>\n".utf8)
    }

    /// Opens the array or dictionary element `tag` at `depth`: `<tag/>` when it is empty, and then `false`
    /// as nothing more is to be written, else `<tag>` and `true`.
    private mutating func openContainer(_ tag: String, isEmpty: Bool, depth: Int) throws(XMLPlistWriteFailure) -> Bool {
        try checkDepth(depth)
        output.append(contentsOf: (isEmpty ? "<\(tag)/>\n" : "<\(tag)>\n").utf8)
        return !isEmpty
    }

    /// Closes the element `tag` opened with ``openContainer(_:isEmpty:depth:)`` at `depth`, on a line of its own.
    private mutating func closeContainer(_ tag: String, depth: Int) {
        indent(depth)
        output.append(contentsOf: "</\(tag)>\n".utf8)
    }

    private func checkDepth(_ depth: Int) throws(XMLPlistWriteFailure) {
        guard depth < maxDepth else {
            throw XMLPlistWriteFailure(.limitExceeded, "the value nests arrays and dictionaries deeper than the limit of \(maxDepth)")
        }
    }

    private mutating func indent(_ depth: Int) {
        for _ in 0..<depth { output.append(0x09) }
    }

    /// Appends `string` with `&`, `<`, `>` and CR escaped; refuses characters XML 1.0 cannot carry.
    private mutating func appendEscaped(_ string: String) throws(XMLPlistWriteFailure) {
        var problem: UInt32?
        let appended: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            problem = appendEscaped(utf8: bytes)
        }
        if appended == nil {
            problem = Array(string.utf8).withUnsafeBufferPointer { appendEscaped(utf8: $0) }
        }
        if let problem {
            let hex = String(problem, radix: 16, uppercase: true)
            throw XMLPlistWriteFailure(
                .unsupportedValue,
                "XML 1.0 cannot carry the character U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)")
        }
    }

    /// Appends escaped UTF-8; returns the first scalar XML cannot carry, if any (then nothing more is appended).
    private mutating func appendEscaped(utf8 bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            let replacement: StaticString
            if byte >= 0x3F {
                // U+FFFE and U+FFFF are EF BF BE / EF BF BF.
                if byte == 0xEF, index + 2 < count, bytes[index + 1] == 0xBF, bytes[index + 2] >= 0xBE {
                    return bytes[index + 2] == 0xBE ? 0xFFFE : 0xFFFF
                }
                index += 1
                continue
            }
            switch byte {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case 0x0D: replacement = "&#13;"
            case 0x09, 0x0A, 0x20...0x3F:
                index += 1
                continue
            default:
                return UInt32(byte)
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            output.append(contentsOf: UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
            index += 1
            runStart = index
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        return nil
    }
}

/// Why writing failed, with the path to the offending value built while unwinding.
struct XMLPlistWriteFailure: Error {
    enum PathComponent {
        case key(String)
        case index(Int)
    }

    var code: CodecError.Code
    var message: String
    /// Innermost component first.
    var reversedPath: [PathComponent] = []

    init(_ code: CodecError.Code, _ message: String) {
        self.code = code
        self.message = message
    }

    func inside(_ component: PathComponent) -> XMLPlistWriteFailure {
        var copy = self
        copy.reversedPath.append(component)
        return copy
    }

    /// `root.items[3]`.
    var path: String {
        var path = "root"
        for component in reversedPath.reversed() {
            switch component {
            case .key(let key): path += "." + key
            case .index(let index): path += "[\(index)]"
            }
        }
        return path
    }

    var codecError: CodecError {
        CodecError(code, "\(message) (at \(path))")
    }
}
