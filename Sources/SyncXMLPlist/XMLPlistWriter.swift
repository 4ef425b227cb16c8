#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Writes a ``SyncValue`` as an XML property list, streaming into a byte array
/// with Apple's layout: the standard prologue, one element per line, tab indentation.
///
/// A first walk estimates the size of the document (exactly, but for escapes and the digits of
/// numbers, which it counts at their longest), so that the bytes are written once, through a pointer,
/// into the array that becomes ``output``; `<data>` is base64-encoded straight into it.
struct XMLPlistWriter {
    /// The document, once ``writeDocument(_:)`` has written it.
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
    }

    /// Writes the whole document.
    mutating func writeDocument(_ value: SyncValue) throws(XMLPlistWriteFailure) {
        let maxDepth = self.maxDepth
        let estimate =
            Self.prologue.count + Self.epilogue.count + XMLPlistSize.estimate(of: value, depth: 0, maxDepth: maxDepth)
        output = try ByteOutput.bytes(capacity: estimate + estimate / 64 + 64) { output throws(XMLPlistWriteFailure) in
            var encoder = XMLPlistEncoder(output: output, maxDepth: maxDepth)
            defer { output = encoder.output }
            Self.prologue.withUnsafeBufferPointer { encoder.output.append(contentsOf: $0) }
            try encoder.write(value, depth: 0)
            Self.epilogue.withUnsafeBufferPointer { encoder.output.append(contentsOf: $0) }
        }
    }
}

/// Estimates of the size of XML property list elements, for sizing the output before writing.
enum XMLPlistSize {
    /// The size of `value` written at `depth`, counting no escapes and the longest numbers; below
    /// containers deeper than `maxDepth` (which the writer refuses) it stops counting.
    static func estimate(of value: SyncValue, depth: Int, maxDepth: Int) -> Int {
        switch value {
        case .string(let string): return depth + 18 + string.utf8.count  // <string></string>\n
        case .integer, .unsignedInteger: return depth + 20 + 20  // <integer></integer>\n
        case .real: return depth + 14 + 24  // <real></real>\n
        case .bool: return depth + 9  // <false/>\n
        case .date: return depth + 14 + 20  // <date></date>\n
        case .data(let bytes): return 2 * depth + 15 + PlistBase64.linesSize(of: bytes.count, indent: depth)
        case .null: return 0
        case .array(let elements):
            guard depth < maxDepth else { return 0 }
            var size = 2 * depth + 17  // <array>\n</array>\n
            for element in elements { size &+= estimate(of: element, depth: depth + 1, maxDepth: maxDepth) }
            return size
        case .dictionary(let entries):
            guard depth < maxDepth else { return 0 }
            var size = 2 * depth + 15  // <dict>\n</dict>\n
            for (key, element) in entries {
                size &+= depth + 1 + 12 + key.utf8.count  // <key></key>\n
                size &+= estimate(of: element, depth: depth + 1, maxDepth: maxDepth)
            }
            return size
        }
    }
}

/// The walk that writes elements into a ``ByteOutput``.
private struct XMLPlistEncoder {
    /// Where the bytes go.
    var output: ByteOutput
    /// The deepest nesting of arrays and dictionaries allowed.
    let maxDepth: Int
    /// The keys of the dictionaries being written, in order.
    var keyOrder = SortedKeys()

    init(output: ByteOutput, maxDepth: Int) {
        self.output = output
        self.maxDepth = maxDepth
    }

    /// Writes `value` on its own line(s), indented by `depth` tabs.
    mutating func write(_ value: SyncValue, depth: Int) throws(XMLPlistWriteFailure) {
        indent(depth)
        switch value {
        case .string(let string):
            output.append("<string>")
            try appendEscaped(string)
            output.append("</string>\n")
        case .integer(let integer):
            output.append("<integer>")
            PlistNumberFormat.append(integer: integer, to: &output)
            output.append("</integer>\n")
        case .unsignedInteger(let integer):
            output.append("<integer>")
            output.appendDecimal(integer)
            output.append("</integer>\n")
        case .real(let real):
            output.append("<real>")
            PlistNumberFormat.append(real: real, to: &output)
            output.append("</real>\n")
        case .bool(let bool):
            output.append(bool ? "<true/>\n" : "<false/>\n")
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
            output.append("<date>")
            PlistDateFormat.append(seconds: Int64(seconds), to: &output)
            output.append("</date>\n")
        case .data(let bytes):
            output.append("<data>\n")
            PlistBase64.appendLines(of: bytes, indent: depth, to: &output)
            indent(depth)
            output.append("</data>\n")
        case .array(let elements):
            try checkDepth(depth)
            if elements.isEmpty {
                output.append("<array/>\n")
                return
            }
            output.append("<array>\n")
            for (index, element) in elements.enumerated() {
                do { try write(element, depth: depth + 1) } catch { throw error.inside(.index(index)) }
            }
            indent(depth)
            output.append("</array>\n")
        case .dictionary(let entries):
            try checkDepth(depth)
            if entries.isEmpty {
                output.append("<dict/>\n")
                return
            }
            output.append("<dict>\n")
            let run = keyOrder.push(entries)
            for position in run {
                let (key, element) = entries[keyOrder.index(at: position)]
                indent(depth + 1)
                output.append("<key>")
                do { try appendEscaped(key) } catch { throw error.inside(.key(key)) }
                output.append("</key>\n")
                do { try write(element, depth: depth + 1) } catch { throw error.inside(.key(key)) }
            }
            keyOrder.pop(run)
            indent(depth)
            output.append("</dict>\n")
        case .null:
            throw XMLPlistWriteFailure(.unsupportedValue, "property lists cannot carry null")
        }
    }

    private func checkDepth(_ depth: Int) throws(XMLPlistWriteFailure) {
        guard depth < maxDepth else {
            throw XMLPlistWriteFailure(.limitExceeded, "the value nests arrays and dictionaries deeper than the limit of \(maxDepth)")
        }
    }

    @inline(__always)
    private mutating func indent(_ depth: Int) {
        output.reserve(depth)
        for _ in 0..<depth { output.appendUnchecked(0x09) }
    }

    /// Appends `string` with `&`, `<`, `>` and CR escaped; refuses characters XML 1.0 cannot carry.
    private mutating func appendEscaped(_ string: String) throws(XMLPlistWriteFailure) {
        var string = string
        let problem = string.withUTF8 { appendEscaped(utf8: $0) }
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
            output.append(replacement)
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
