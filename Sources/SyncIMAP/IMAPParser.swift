/// Reads one whole server response (as ``IMAPResponseFramer`` cuts them) into an ``IMAPResponse``.
///
/// Literals (`{n}`, `{n+}`, `~{n}`) are accepted wherever a string may be;
/// quoted strings with `\"` and `\\`; `NIL`; nested lists; atoms with a
/// bracketed section (`BODY[HEADER.FIELDS (SUBJECT)]<0>`). Anything else is an
/// ``IMAPError`` that says where, never a crash.
public enum IMAPParser {
    /// The deepest nesting of lists accepted.
    public static let maxDepth = 64

    /// Parses one response.
    /// - Throws: ``IMAPError`` when the bytes are no IMAP response.
    public static func parse(_ unit: [UInt8]) throws(IMAPError) -> IMAPResponse {
        var cursor = Cursor(bytes: unit)
        return try cursor.response()
    }

    struct Cursor {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            var end = bytes.count
            if end > 0 && bytes[end - 1] == 10 { end -= 1 }
            if end > 0 && bytes[end - 1] == 13 { end -= 1 }
            self.bytes = Array(bytes[..<end])
        }

        // MARK: Responses

        mutating func response() throws(IMAPError) -> IMAPResponse {
            guard !bytes.isEmpty else { throw IMAPError("the server sent an empty line") }
            if take("+") {
                if peek == UInt8(ascii: " ") { index += 1 }
                return .continuation(rest())
            }
            if take("*") {
                try space()
                return .untagged(try untagged())
            }
            let tag = try atom()
            try space()
            let name = try atom().uppercased()
            guard let status = IMAPStatus(rawValue: name), status == .ok || status == .no || status == .bad else {
                throw IMAPError("a tagged response must be OK, NO or BAD, not '\(name.prefix(40))'")
            }
            let (code, text) = try responseText()
            return .tagged(tag: tag, status: status, code: code, text: text)
        }

        mutating func untagged() throws(IMAPError) -> IMAPUntagged {
            if let first = peek, first >= 48 && first <= 57 {
                let number = try uint32()
                try space()
                let name = try atom().uppercased()
                switch name {
                case "EXISTS": return .exists(number)
                case "RECENT": return .recent(number)
                case "EXPUNGE": return .expunge(number)
                case "FETCH":
                    try space()
                    return .fetch(try fetch(sequence: number))
                default:
                    return .other(name, [.atom(String(number))] + (try values()))
                }
            }
            let name = try atom().uppercased()
            switch name {
            case "OK", "NO", "BAD", "PREAUTH", "BYE":
                let (code, text) = try responseText()
                return .condition(IMAPStatus(rawValue: name)!, code, text)
            case "CAPABILITY":
                return .capability(try atomsToEnd())
            case "ENABLED":
                return .enabled(try atomsToEnd())
            case "FLAGS":
                try space()
                return .flags(try flagList())
            case "LIST", "LSUB":
                try space()
                let attributes = try flagList()
                try space()
                let delimiter = try nstring().map { String(decoding: $0, as: UTF8.self) }
                try space()
                let name = try mailbox()
                _ = try values()  // extended data (CHILDINFO, OLDNAME)
                return .list(IMAPListEntry(attributes: attributes, delimiter: delimiter, name: name))
            case "STATUS":
                try space()
                let name = try mailbox()
                try space()
                let items = try list()
                guard items.count % 2 == 0 else { throw IMAPError("a STATUS response needs pairs of item and number") }
                var status: [String: UInt64] = [:]
                for pair in stride(from: 0, to: items.count, by: 2) {
                    guard let item = items[pair].text, case .atom = items[pair], let value = items[pair + 1].number else {
                        throw IMAPError("a STATUS response needs pairs of item and number")
                    }
                    status[item.uppercased()] = value
                }
                return .status(name, status)
            case "SEARCH":
                var numbers: [UInt32] = []
                var modSeq: UInt64?
                while take(" ") {
                    if peek == UInt8(ascii: "(") {
                        let items = try list()
                        guard items.count == 2, items[0].text?.uppercased() == "MODSEQ", let value = items[1].number else {
                            throw IMAPError("a SEARCH response may end in (MODSEQ n) only")
                        }
                        modSeq = value
                    } else {
                        numbers.append(try uint32())
                    }
                }
                return .search(numbers, modSeq: modSeq)
            case "VANISHED":
                try space()
                var earlier = false
                if peek == UInt8(ascii: "(") {
                    let items = try list()
                    guard items.count == 1, items[0].text?.uppercased() == "EARLIER" else {
                        throw IMAPError("VANISHED may only say (EARLIER)")
                    }
                    earlier = true
                    try space()
                }
                return .vanished(earlier: earlier, try IMAPSequenceSet(parsing: try atom()))
            case "METADATA":
                try space()
                let name = try mailbox()
                try space()
                var entries: [String: String?] = [:]
                if peek == UInt8(ascii: "(") {
                    let items = try list()
                    guard items.count % 2 == 0 else { throw IMAPError("a METADATA response needs pairs of entry and value") }
                    for pair in stride(from: 0, to: items.count, by: 2) {
                        guard let entry = items[pair].text else { throw IMAPError("a METADATA entry must be a string") }
                        switch items[pair + 1] {
                        case .nil: entries[entry] = .some(nil)
                        case .string(let bytes): entries[entry] = String(decoding: bytes, as: UTF8.self)
                        case .atom(let atom): entries[entry] = atom
                        case .list: throw IMAPError("a METADATA value must be a string or NIL")
                        }
                    }
                } else {
                    entries[try astring()] = .some(nil)
                    while take(" ") { entries[try astring()] = .some(nil) }
                }
                return .metadata(name, entries)
            default:
                return .other(name, try values())
            }
        }

        /// `[code] text` after a status (the space before it included).
        mutating func responseText() throws(IMAPError) -> (IMAPResponseCode?, String) {
            guard take(" ") else { return (nil, "") }
            var code: IMAPResponseCode?
            if take("[") {
                code = try responseCode()
                guard take("]") else { throw IMAPError("a response code must end in ']'") }
                _ = take(" ")
            }
            return (code, rest())
        }

        mutating func responseCode() throws(IMAPError) -> IMAPResponseCode {
            let name = try atom().uppercased()
            switch name {
            case "UIDVALIDITY":
                try space()
                return .uidValidity(try uint32())
            case "UIDNEXT":
                try space()
                return .uidNext(try uint32())
            case "HIGHESTMODSEQ":
                try space()
                return .highestModSeq(try uint64())
            case "NOMODSEQ": return .noModSeq
            case "READ-WRITE": return .readWrite
            case "READ-ONLY": return .readOnly
            case "CLOSED": return .closed
            case "APPENDUID":
                try space()
                let validity = try uint32()
                try space()
                return .appendUID(uidValidity: validity, uids: try IMAPSequenceSet(parsing: try atom()))
            case "COPYUID":
                try space()
                let validity = try uint32()
                try space()
                let from = try IMAPSequenceSet(parsing: try atom())
                try space()
                return .copyUID(uidValidity: validity, from: from, to: try IMAPSequenceSet(parsing: try atom()))
            case "MODIFIED":
                try space()
                return .modified(try IMAPSequenceSet(parsing: try atom()))
            case "PERMANENTFLAGS":
                try space()
                return .permanentFlags(try flagList())
            case "CAPABILITY":
                return .capability(try atomsToEnd(stoppingAt: UInt8(ascii: "]")))
            default:
                guard take(" ") else { return .other(name, nil) }
                let start = index
                var depth = 0
                while let byte = peek, byte != UInt8(ascii: "]") || depth > 0 {
                    if byte == UInt8(ascii: "[") { depth += 1 }
                    if byte == UInt8(ascii: "]") { depth -= 1 }
                    index += 1
                }
                return .other(name, String(decoding: bytes[start..<index], as: UTF8.self))
            }
        }

        mutating func fetch(sequence: UInt32) throws(IMAPError) -> IMAPFetch {
            var fetch = IMAPFetch(sequence: sequence)
            guard take("(") else { throw IMAPError("FETCH data must be a parenthesized list") }
            var first = true
            while !take(")") {
                if !first { try space() }
                first = false
                let name = try atom()
                let upper = name.uppercased()
                try space()
                switch upper {
                case "UID":
                    fetch.uid = try uint32()
                case "FLAGS":
                    fetch.flags = try flagList()
                case "MODSEQ":
                    let items = try list()
                    guard items.count == 1, let value = items[0].number else { throw IMAPError("MODSEQ must be (number)") }
                    fetch.modSeq = value
                default:
                    if upper.hasPrefix("BODY[") || upper.hasPrefix("BINARY[") || upper.hasPrefix("RFC822") {
                        if let bytes = try nstring() { fetch.sections[upper] = bytes }
                    } else {
                        fetch.other[upper] = try value(depth: 0)
                    }
                }
            }
            guard index == bytes.count else { throw IMAPError("unexpected bytes after FETCH data at byte \(index)") }
            return fetch
        }

        // MARK: Values

        /// Values separated by spaces, to the end.
        mutating func values() throws(IMAPError) -> [IMAPValue] {
            var result: [IMAPValue] = []
            while take(" ") {
                if index == bytes.count { break }
                result.append(try value(depth: 0))
            }
            guard index == bytes.count else { throw IMAPError("unexpected '\(Character(Unicode.Scalar(bytes[index])))' at byte \(index)") }
            return result
        }

        mutating func value(depth: Int) throws(IMAPError) -> IMAPValue {
            guard let byte = peek else { throw IMAPError("the response ends where a value was expected") }
            switch byte {
            case UInt8(ascii: "("): return .list(try list(depth: depth + 1))
            case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "~"):
                return .string(try string())
            default:
                let atom = try atom()
                return atom.uppercased() == "NIL" ? .nil : .atom(atom)
            }
        }

        mutating func list(depth: Int = 1) throws(IMAPError) -> [IMAPValue] {
            guard depth <= IMAPParser.maxDepth else { throw IMAPError("lists nested deeper than \(IMAPParser.maxDepth)") }
            guard take("(") else { throw IMAPError("expected '(' at byte \(index)") }
            var items: [IMAPValue] = []
            while !take(")") {
                if !items.isEmpty { try space() }
                items.append(try value(depth: depth))
            }
            return items
        }

        mutating func flagList() throws(IMAPError) -> [String] {
            try list().map { (value) throws(IMAPError) -> String in
                guard case .atom(let flag) = value else { throw IMAPError("a flag must be an atom") }
                return flag
            }
        }

        mutating func atomsToEnd(stoppingAt stop: UInt8? = nil) throws(IMAPError) -> [String] {
            var atoms: [String] = []
            while take(" ") {
                if index == bytes.count || peek == stop { break }
                atoms.append(try atom())
            }
            return atoms
        }

        /// An atom; a `[` inside it runs to its matching `]` (a section), and a `<…>` may follow.
        mutating func atom() throws(IMAPError) -> String {
            let start = index
            while let byte = peek, Self.isAtomByte(byte) { index += 1 }
            if peek == UInt8(ascii: "[") {
                var depth = 0
                repeat {
                    guard let byte = peek, byte >= 32, byte != 127 else { throw IMAPError("a section '[' is not closed") }
                    if byte == UInt8(ascii: "[") { depth += 1 }
                    if byte == UInt8(ascii: "]") { depth -= 1 }
                    index += 1
                } while depth > 0
                if peek == UInt8(ascii: "<") {
                    while let byte = peek, byte != UInt8(ascii: ">") {
                        guard byte >= 32 else { throw IMAPError("a partial '<' is not closed") }
                        index += 1
                    }
                    guard take(">") else { throw IMAPError("a partial '<' is not closed") }
                }
            }
            guard index > start else {
                if let byte = peek { throw IMAPError("expected an atom at byte \(index), found '\(Self.show(byte))'") }
                throw IMAPError("the response ends where an atom was expected")
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        static func isAtomByte(_ byte: UInt8) -> Bool {
            switch byte {
            case 0...32, 127: false
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "]"):
                false
            default: true
            }
        }

        static func show(_ byte: UInt8) -> String {
            byte >= 32 && byte < 127 ? String(Character(Unicode.Scalar(byte))) : "\\x" + String(byte, radix: 16)
        }

        /// A quoted string or a literal.
        mutating func string() throws(IMAPError) -> [UInt8] {
            if take("\"") {
                var result: [UInt8] = []
                while true {
                    guard let byte = peek else { throw IMAPError("a quoted string is not closed") }
                    index += 1
                    switch byte {
                    case UInt8(ascii: "\""): return result
                    case UInt8(ascii: "\\"):
                        guard let escaped = peek, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                            throw IMAPError("a quoted string may escape only '\"' and '\\'")
                        }
                        index += 1
                        result.append(escaped)
                    case 13, 10: throw IMAPError("a quoted string may not hold a line break")
                    default: result.append(byte)
                    }
                }
            }
            _ = take("~")
            guard take("{") else { throw IMAPError("expected a string at byte \(index)") }
            let length = try uint64()
            _ = take("+")
            guard take("}") else { throw IMAPError("a literal's '{n}' must end its line") }
            _ = take("\r")
            guard take("\n") else { throw IMAPError("a literal's '{n}' must end its line") }
            guard length <= UInt64(bytes.count - index) else { throw IMAPError("a literal of \(length) bytes runs past the response") }
            let end = index + Int(length)
            defer { index = end }
            return Array(bytes[index..<end])
        }

        mutating func nstring() throws(IMAPError) -> [UInt8]? {
            if let byte = peek, byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "~") { return try string() }
            let word = try atom()
            guard word.uppercased() == "NIL" else { throw IMAPError("expected a string or NIL, found '\(word.prefix(40))'") }
            return nil
        }

        mutating func astring() throws(IMAPError) -> String {
            if let byte = peek, byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "~") {
                return String(decoding: try string(), as: UTF8.self)
            }
            return try atom()
        }

        /// A mailbox name, decoded from modified UTF-7.
        mutating func mailbox() throws(IMAPError) -> String {
            let name = try astring()
            return name.uppercased() == "INBOX" ? "INBOX" : ModifiedUTF7.decode(name)
        }

        mutating func uint32() throws(IMAPError) -> UInt32 {
            let value = try uint64()
            guard value <= UInt64(UInt32.max) else { throw IMAPError("\(value) is larger than a 32-bit number") }
            return UInt32(value)
        }

        mutating func uint64() throws(IMAPError) -> UInt64 {
            let start = index
            var value: UInt64 = 0
            while let byte = peek, byte >= 48 && byte <= 57 {
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(UInt64(byte - 48))
                guard !overflow1 && !overflow2 else { throw IMAPError("a number too large at byte \(start)") }
                value = sum
                index += 1
            }
            guard index > start else { throw IMAPError("expected a number at byte \(start)") }
            return value
        }

        // MARK: Bytes

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
            index += 1
            return true
        }

        mutating func space() throws(IMAPError) {
            guard take(" ") else {
                if let byte = peek { throw IMAPError("expected a space at byte \(index), found '\(Self.show(byte))'") }
                throw IMAPError("the response ends where more was expected")
            }
        }

        mutating func rest() -> String {
            defer { index = bytes.count }
            return String(decoding: bytes[index...], as: UTF8.self)
        }
    }
}

/// Mailbox names in modified UTF-7 (RFC 3501 §5.1.3): `Entw&APw-rfe` is `Entwürfe`.
public enum ModifiedUTF7 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,".utf8)

    /// The name as sent on the wire.
    public static func encode(_ name: String) -> String {
        var result = ""
        var pending: [UInt16] = []
        func flush() {
            guard !pending.isEmpty else { return }
            var bytes: [UInt8] = []
            for unit in pending { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            var text = "&"
            var index = 0
            while index < bytes.count {
                let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
                let b0 = Int(chunk[0]), b1 = chunk.count > 1 ? Int(chunk[1]) : 0, b2 = chunk.count > 2 ? Int(chunk[2]) : 0
                let symbols = [b0 >> 2, ((b0 & 3) << 4) | (b1 >> 4), ((b1 & 15) << 2) | (b2 >> 6), b2 & 63]
                for symbol in symbols.prefix(chunk.count + 1) { text.append(Character(Unicode.Scalar(alphabet[symbol]))) }
                index += 3
            }
            result += text + "-"
            pending = []
        }
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x20 && scalar.value <= 0x7E {
                flush()
                result += scalar == "&" ? "&-" : String(scalar)
            } else {
                pending.append(contentsOf: String(scalar).utf16)
            }
        }
        flush()
        return result
    }

    /// The name a server sent, decoded; a malformed run is kept as sent.
    public static func decode(_ wire: String) -> String {
        guard wire.contains("&") else { return wire }
        var result = ""
        var bytes = Array(wire.utf8)[...]
        while let ampersand = bytes.firstIndex(of: UInt8(ascii: "&")) {
            result += String(decoding: bytes[..<ampersand], as: UTF8.self)
            guard let dash = bytes[ampersand...].firstIndex(of: UInt8(ascii: "-")) else {
                result += String(decoding: bytes[ampersand...], as: UTF8.self)
                return result
            }
            let run = bytes[(ampersand + 1)..<dash]
            if run.isEmpty {
                result += "&"
            } else if let decoded = decodeRun(Array(run)) {
                result += decoded
            } else {
                result += String(decoding: bytes[ampersand...dash], as: UTF8.self)
            }
            bytes = bytes[(dash + 1)...]
        }
        return result + String(decoding: bytes, as: UTF8.self)
    }

    private static func decodeRun(_ run: [UInt8]) -> String? {
        var bits = 0
        var count = 0
        var bytes: [UInt8] = []
        for symbol in run {
            guard let value = alphabet.firstIndex(of: symbol) else { return nil }
            bits = (bits << 6) | value
            count += 6
            if count >= 8 {
                count -= 8
                bytes.append(UInt8((bits >> count) & 0xFF))
            }
            bits &= (1 << count) - 1
        }
        guard bytes.count % 2 == 0 else { return nil }
        let units = stride(from: 0, to: bytes.count, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
        var result = ""
        for scalar in Unicode.UTF16.decode(units) {
            guard let scalar else { return nil }
            result.unicodeScalars.append(scalar)
        }
        return result
    }
}

extension Unicode.UTF16 {
    /// The scalars of UTF-16 code units; `nil` for a unit that makes none.
    static func decode(_ units: [UInt16]) -> [Unicode.Scalar?] {
        var result: [Unicode.Scalar?] = []
        var iterator = units.makeIterator()
        var decoder = Unicode.UTF16()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): result.append(scalar)
            case .emptyInput: return result
            case .error: result.append(nil)
            }
        }
    }
}
