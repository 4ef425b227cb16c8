#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import SyncCore

/// One record as it travels in a ``DeltaPack``: a flat dictionary of the
/// model's own fields plus Aquasync's sync columns.
///
/// ```swift
/// let delta = Delta(
///     gid: "3f2b…", deviceToken: "9c1e…", localTimestamp: 1_700_000_000_123,
///     isDeleted: false, fields: ["name": "Ada"])
/// ```
///
/// On the wire the sync columns sit beside the fields: `gid`,
/// `deviceToken`, `localTimestamp`, `isDeleted` and, in what the server
/// sends, `ust`. A model's own fields cannot use those names.
public struct Delta: Sendable, Hashable {
    /// The record's global id: a lowercase UUID made by the device that created it.
    public var gid: String
    /// The device that made this version: a lowercase UUID.
    public var deviceToken: String
    /// When the device made this version, in milliseconds since 1970 (exact in every codec).
    public var localTimestamp: Int64
    /// Whether this version is a soft delete.
    public var isDeleted: Bool
    /// The server's update sequence timestamp; set by the server, `nil` in what a device sends.
    public var ust: Int64?
    /// The model's own fields.
    public var fields: [String: SyncValue]

    /// Makes a delta.
    public init(
        gid: String, deviceToken: String, localTimestamp: Int64, isDeleted: Bool = false, ust: Int64? = nil,
        fields: [String: SyncValue] = [:]
    ) {
        self.gid = gid
        self.deviceToken = deviceToken
        self.localTimestamp = localTimestamp
        self.isDeleted = isDeleted
        self.ust = ust
        self.fields = fields
    }

    /// The names of the sync columns, which a model's fields cannot use.
    public static let syncColumns: Set<String> = ["gid", "deviceToken", "localTimestamp", "isDeleted", "ust"]

    /// The delta as a flat dictionary, dropping fields the codec cannot carry
    /// (null in a property list): a missing field and a null field mean the same here.
    public func value(for codecFeatures: CodecFeatures = [.null]) -> SyncValue {
        var dictionary = codecFeatures.contains(.null) ? fields : fields.filter { $0.value != .null }
        // Room for the columns at once: the copy of the fields is made at its final size instead of growing twice.
        dictionary.reserveCapacity(dictionary.count + 5)
        dictionary["gid"] = .string(gid)
        dictionary["deviceToken"] = .string(deviceToken)
        dictionary["localTimestamp"] = .integer(localTimestamp)
        dictionary["isDeleted"] = .bool(isDeleted)
        if let ust { dictionary["ust"] = .integer(ust) }
        return .dictionary(dictionary)
    }
}

extension Delta {
    /// Reads a delta from its wire form.
    ///
    /// The delta's fields are `value`'s dictionary without the sync columns, taken without a copy when
    /// nothing else holds it.
    /// - Parameter path: where the delta sits in its pack, for error messages (`Contact[3]`); made only for one.
    /// - Throws: ``AquasyncValidationError`` naming the column that is missing or wrong.
    public init(_ value: consuming SyncValue, at path: @autoclosure () -> String) throws(AquasyncValidationError) {
        guard case .dictionary(var dictionary) = consume value else {
            throw AquasyncValidationError("\(path()) is not a dictionary")
        }
        gid = try Self.uuid(dictionary.removeValue(forKey: "gid"), "gid", at: path())
        deviceToken = try Self.uuid(dictionary.removeValue(forKey: "deviceToken"), "deviceToken", at: path())
        switch dictionary.removeValue(forKey: "localTimestamp") {
        case .integer(let milliseconds)?: localTimestamp = milliseconds
        case .date(let date)?:
            guard let milliseconds = Self.exactMilliseconds(date) else {
                throw AquasyncValidationError("\(path()).localTimestamp is a date too far from 1970 to count in milliseconds")
            }
            localTimestamp = milliseconds
        case nil: throw AquasyncValidationError("\(path()).localTimestamp is missing")
        default: throw AquasyncValidationError("\(path()).localTimestamp must be an integer of milliseconds since 1970")
        }
        switch dictionary.removeValue(forKey: "isDeleted") {
        case .bool(let flag)?: isDeleted = flag
        case .integer(let flag)? where flag == 0 || flag == 1: isDeleted = flag == 1
        case nil, .null?: isDeleted = false
        default: throw AquasyncValidationError("\(path()).isDeleted must be a Boolean")
        }
        switch dictionary.removeValue(forKey: "ust") {
        case .integer(let ust)?: self.ust = ust
        case nil, .null?: ust = nil
        default: throw AquasyncValidationError("\(path()).ust must be an integer")
        }
        fields = dictionary
    }

    /// Milliseconds since 1970 of `date`, rounded to the nearest; a date beyond what an `Int64` counts
    /// gives the nearest end (`Int64.min` for one that is not a number).
    public static func milliseconds(_ date: Date) -> Int64 {
        exactMilliseconds(date) ?? (date.timeIntervalSince1970 > 0 ? .max : .min)
    }

    /// Milliseconds since 1970 of `date`, rounded to the nearest, or `nil` when an `Int64` cannot count them.
    static func exactMilliseconds(_ date: Date) -> Int64? {
        Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The first `localTimestamp` after `milliseconds`: one millisecond later, or the same at the end of time.
    static func timestamp(after milliseconds: Int64) -> Int64 {
        milliseconds == .max ? .max : milliseconds + 1
    }

    private static func uuid(_ value: SyncValue?, _ column: String, at path: @autoclosure () -> String) throws(AquasyncValidationError)
        -> String
    {
        guard let value else { throw AquasyncValidationError("\(path()).\(column) is missing") }
        guard case .string(let text) = value, isLowercaseUUID(text) else {
            throw AquasyncValidationError("\(path()).\(column) must be a lowercase UUID, like 0f8fad5b-d9cb-469f-a165-70867728950e")
        }
        return text
    }
}

/// Whether `text` is a UUID in canonical lowercase form (8-4-4-4-12 hex digits).
public func isLowercaseUUID(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { utf8 in
        guard utf8.count == 36 else { return false }
        for index in 0..<36 {
            let byte = utf8[index]
            switch index {
            case 8, 13, 18, 23: if byte != UInt8(ascii: "-") { return false }
            default:
                let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                let isLowerHex = (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                if !isDigit && !isLowerHex { return false }
            }
        }
        return true
    }
}

/// A DeltaPack, or a delta in it, that breaks the protocol's rules. The server
/// answers it with 422 and applies nothing of the pack.
public struct AquasyncValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and where.
    public var message: String
    /// Makes an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }

    /// The error for a field name that starts with `_`, which a server refuses in what devices push.
    static func reservedField(_ name: String, at path: String) -> Self {
        Self("\(path).\(name): field names cannot start with '_'")
    }
}
