import Foundation
import SyncCore
import SyncJSON

/// How `anchorage records` reads fields from the command line and prints them back.
///
/// A field is `NAME=VALUE` or `NAME:TYPE=VALUE`. Without a type the value is
/// text, unless it reads back as exactly the text typed: `1815` is an
/// integer, `2.5` a real, `true` and `false` Booleans. `02134`, `+4930…`,
/// `1e3`, `0x10`, `1.50`, `-0` and ` 7` stay text, so nothing the user typed
/// is ever changed. A type says what the user wants:
///
/// ```
/// zip:string=12345  born:int=1815  ratio:real=1.50  flag:bool=true
/// when:date=2026-01-01T00:00:00Z  photo:data=@face.jpg  key:data=AAEC
/// 'emails:json=[{"label":"home","value":"a@b.c"}]'
/// ```
///
/// `records list` prints each record's fields as one JSON object in the form
/// `:json` reads (see ``listed(_:)``), so a listed field saved back with
/// `NAME:json=…` is the same value.
enum RecordFields {
    /// A type a field may name after its colon.
    enum FieldType: String, CaseIterable {
        case string, int, real, bool, date, data, json

        /// Reads a type name or one of its other spellings (`text`, `integer`, `double`, `boolean`).
        init?(spelling: String) {
            switch spelling.lowercased() {
            case "string", "text", "str": self = .string
            case "int", "integer": self = .int
            case "real", "double", "float": self = .real
            case "bool", "boolean": self = .bool
            case "date": self = .date
            case "data", "bytes": self = .data
            case "json": self = .json
            default: return nil
            }
        }
    }

    /// A field argument that cannot be read, with the line to print.
    struct SyntaxError: Error, CustomStringConvertible {
        /// What is wrong, naming the argument.
        var description: String
    }

    /// The one-line summary of the types, for error messages.
    static let typeList = "string, int, real, bool, date, data or json"

    /// The keys of the one-entry JSON objects that stand for values JSON has no kind for.
    static let dateTag = "$date", dataTag = "$data", realTag = "$real", dictionaryTag = "$dictionary"
    private static let tags: Set<String> = [dateTag, dataTag, realTag, dictionaryTag]

    /// Reads `NAME=VALUE` and `NAME:TYPE=VALUE` arguments into fields; a later argument for a name replaces an earlier one.
    /// - Throws: ``SyntaxError`` for an argument without a name and `=`, an unknown type, or a value that is not of its type.
    static func fields(_ arguments: [String]) throws(SyntaxError) -> [String: SyncValue] {
        var fields: [String: SyncValue] = [:]
        for argument in arguments {
            let (name, value) = try field(argument)
            fields[name] = value
        }
        return fields
    }

    /// Reads one `NAME=VALUE` or `NAME:TYPE=VALUE` argument.
    ///
    /// The type is the word after the last colon before the first `=`; a
    /// field whose own name ends in `:word` is written `NAME:string=VALUE`
    /// (or with any other type), as in `a:b:string=x`.
    /// - Throws: ``SyntaxError`` naming the argument.
    static func field(_ argument: String) throws(SyntaxError) -> (name: String, value: SyncValue) {
        guard let equals = argument.firstIndex(of: "=") else {
            throw SyntaxError(description: "'\(argument)' is not NAME=VALUE or NAME:TYPE=VALUE")
        }
        var name = String(argument[..<equals])
        let text = String(argument[argument.index(after: equals)...])
        var type: FieldType?
        if let colon = name.lastIndex(of: ":") {
            let word = String(name[name.index(after: colon)...])
            if !word.isEmpty, word.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic && $0.isASCII }) {
                guard let known = FieldType(spelling: word) else {
                    throw SyntaxError(
                        description: "'\(word)' in '\(argument)' is not a type: use \(typeList) "
                            + "(a field named '\(name)' is written '\(name):string=…')")
                }
                type = known
                name = String(name[..<colon])
            }
        }
        guard !name.isEmpty else { throw SyntaxError(description: "'\(argument)' has no field name before the '='") }
        guard let type else { return (name, inferred(text)) }
        do {
            return (name, try value(text, as: type))
        } catch {
            throw SyntaxError(description: "\(argument): \(error.description)")
        }
    }

    /// The value of untyped text: an integer, real or Boolean when that
    /// value prints back as exactly `text`, and otherwise the text itself.
    static func inferred(_ text: String) -> SyncValue {
        if text == "true" || text == "false" { return .bool(text == "true") }
        if let integer = Int64(text), String(integer) == text { return .integer(integer) }
        if let integer = UInt64(text), String(integer) == text { return .integer(exactly: integer) }
        if isPlainDecimal(text), let real = Double(text), real.isFinite,
            let printed = try? JSONCodec().encode(.real(real)), printed.elementsEqual(text.utf8)
        {
            return .real(real)
        }
        return .string(text)
    }

    /// Whether `text` is `-?DIGITS.DIGITS`, the only form of a real that untyped text may take.
    private static func isPlainDecimal(_ text: String) -> Bool {
        let unsigned = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }
    }

    /// The value of `text` read as `type`.
    /// - Throws: ``SyntaxError`` saying what the text should look like.
    static func value(_ text: String, as type: FieldType) throws(SyntaxError) -> SyncValue {
        switch type {
        case .string:
            return .string(text)
        case .int:
            if let integer = Int64(text) { return .integer(integer) }
            if let integer = UInt64(text) { return .integer(exactly: integer) }
            throw SyntaxError(description: "'\(text)' is not a whole number between -2^63 and 2^64-1")
        case .real:
            guard !text.hasPrefix("0x"), !text.hasPrefix("-0x"), let real = Double(text) else {
                throw SyntaxError(description: "'\(text)' is not a decimal number such as 1.5, -2 or 1e3")
            }
            return .real(real)
        case .bool:
            guard text == "true" || text == "false" else { throw SyntaxError(description: "'\(text)' is not true or false") }
            return .bool(text == "true")
        case .date:
            return .date(try date(text))
        case .data:
            return .data(try bytes(text))
        case .json:
            let decoded: SyncValue
            do {
                decoded = try JSONCodec().decode(Array(text.utf8))
            } catch {
                throw SyntaxError(description: "not valid JSON: \(error)")
            }
            return try untagged(decoded)
        }
    }

    /// A date in ISO 8601, such as `2026-01-01T00:00:00Z` or `2026-01-01T01:00:00.5+01:00`.
    private static func date(_ text: String) throws(SyntaxError) -> Date {
        guard let date = try? SyncValueDecoder().decode(Date.self, from: .string(text)) else {
            throw SyntaxError(description: "'\(text)' is not an ISO 8601 date and time such as 2026-01-01T00:00:00Z")
        }
        return date
    }

    /// The bytes of `@PATH` (a file) or of base64 text.
    private static func bytes(_ text: String) throws(SyntaxError) -> [UInt8] {
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw SyntaxError(description: "cannot read the file \(path)")
            }
            return Array(contents)
        }
        guard let decoded = Data(base64Encoded: text) else {
            throw SyntaxError(description: "'\(text)' is neither @FILE nor base64")
        }
        return Array(decoded)
    }

    // MARK: The listed form

    /// `value` in the JSON form `records list` prints and `:json` reads.
    ///
    /// Text, numbers, Booleans, null, arrays and dictionaries are JSON's own
    /// (a real always prints with a `.` or an exponent, so it stays a real).
    /// What JSON has no kind for becomes a one-entry object:
    /// `{"$date":"2026-01-01T00:00:00Z"}`, `{"$data":"BASE64"}`,
    /// `{"$real":"nan"}` (or `"inf"`, `"-inf"`), and a dictionary that is
    /// itself one entry under one of these keys is wrapped as
    /// `{"$dictionary":{…}}`, so every value reads back as itself.
    static func listed(_ value: SyncValue) -> SyncValue {
        switch value {
        case .date: return [dateTag: value]
        case .data: return [dataTag: value]
        case .real(let real) where !real.isFinite:
            return [realTag: .string(real.isNaN ? "nan" : real < 0 ? "-inf" : "inf")]
        case .array(let items): return .array(items.map(listed))
        case .dictionary(let entries):
            let listedEntries = SyncValue.dictionary(entries.mapValues(listed))
            if entries.count == 1, let key = entries.keys.first, tags.contains(key) { return [dictionaryTag: listedEntries] }
            return listedEntries
        default: return value
        }
    }

    /// The value a JSON value in the ``listed(_:)`` form stands for.
    /// - Throws: ``SyntaxError`` for a tag whose content is not of its form.
    static func untagged(_ value: SyncValue) throws(SyntaxError) -> SyncValue {
        try untaggedIfChanged(value) ?? value
    }

    /// What `value` stands for, or `nil` when it holds no tag and stands for itself: a record's
    /// untagged parts are not copied.
    /// - Throws: ``SyntaxError`` for a tag whose content is not of its form.
    private static func untaggedIfChanged(_ value: SyncValue) throws(SyntaxError) -> SyncValue? {
        switch value {
        case .array(let items):
            // Written over a copy only once an item changes.
            var result = items
            var changed = false
            for index in items.indices {
                guard let item = try untaggedIfChanged(items[index]) else { continue }
                result[index] = item
                changed = true
            }
            return changed ? .array(result) : nil
        case .dictionary(let entries):
            if entries.count == 1, let entry = entries.first, tags.contains(entry.key) {
                let (key, content) = (entry.key, entry.value)
                switch (key, content) {
                case (dateTag, .string(let text)): return .date(try date(text))
                case (dataTag, .string(let text)):
                    guard let decoded = Data(base64Encoded: text) else {
                        throw SyntaxError(description: "{\"\(dataTag)\": …} needs base64 text, not '\(text)'")
                    }
                    return .data(Array(decoded))
                case (realTag, .string("nan")): return .real(.nan)
                case (realTag, .string("inf")): return .real(.infinity)
                case (realTag, .string("-inf")): return .real(-.infinity)
                case (dictionaryTag, .dictionary(let inner)): return .dictionary(try untaggedEntries(inner) ?? inner)
                default:
                    throw SyntaxError(
                        description: "{\"\(key)\": …} stands for a typed value: \(dateTag) takes ISO 8601 text, "
                            + "\(dataTag) base64 text, \(realTag) \"nan\", \"inf\" or \"-inf\", \(dictionaryTag) an object")
                }
            }
            return try untaggedEntries(entries).map(SyncValue.dictionary)
        default:
            return nil
        }
    }

    /// `entries` with their values untagged, or `nil` when none holds a tag.
    private static func untaggedEntries(_ entries: [String: SyncValue]) throws(SyntaxError) -> [String: SyncValue]? {
        // Values are replaced where they stand, in a copy made at the first change: the keys keep their
        // places, so nothing is hashed again.
        var result = entries
        var changed = false
        for index in entries.indices {
            guard let value = try untaggedIfChanged(entries.values[index]) else { continue }
            result.values[index] = value
            changed = true
        }
        return changed ? result : nil
    }

    /// The JSON line of `entries`, each value in its ``listed(_:)`` form.
    static func line(_ entries: [String: SyncValue]) throws -> String {
        String(decoding: try JSONCodec().encode(.dictionary(entries)), as: UTF8.self)
    }

    /// `fields` in the ``listed(_:)`` form, as the value of a line's `fields`.
    static func listedFields(_ fields: [String: SyncValue]) -> SyncValue {
        .dictionary(fields.mapValues(listed))
    }
}
