public import SyncCore

/// One OTA message: a header and a body of commands and command responses,
/// processed in order.
///
/// ```swift
/// var message = OTAMessage(header: OTAHeader(userid: "ana", deviceid: "phone-1", sequence: 1))
/// message.body.append(.command(OTACommand(name: "sync-start", sequence: 1, params: ["uri": "com.apple.Contacts"])))
/// let bytes = try XMLPlistCodec().encode(message.value)
/// let back = try OTAMessage(XMLPlistCodec().decode(bytes))
/// ```
///
/// On the wire it is a dictionary with exactly two keys, `header` and `body`
/// (docs/ota.md). ``init(_:)`` refuses anything else with an
/// ``OTAMessageError`` whose status is `E_BadRequest`.
public struct OTAMessage: Hashable, Sendable {
    /// Who sends, which message this is, whether the sender is done.
    public var header: OTAHeader
    /// Commands and command responses, in order.
    public var body: [OTABodyEntry]

    /// Makes a message.
    public init(header: OTAHeader, body: [OTABodyEntry] = []) {
        self.header = header
        self.body = body
    }

    /// Reads a message from its value.
    /// - Throws: ``OTAMessageError`` (`E_BadRequest`) naming what is wrong.
    public init(_ value: SyncValue) throws(OTAMessageError) {
        guard case .dictionary(let top) = value else { throw .badRequest("a message must be a dictionary") }
        guard Set(top.keys) == ["header", "body"] else {
            throw .badRequest("a message must have exactly the keys header and body, not \(top.keys.sorted())")
        }
        header = try OTAHeader(top["header"]!)
        guard case .array(let entries) = top["body"]! else { throw .badRequest("body must be an array") }
        body = try entries.enumerated().map { index, entry throws(OTAMessageError) in
            try OTABodyEntry(entry, at: index)
        }
    }

    /// The message as a value, ready for a codec.
    public var value: SyncValue {
        ["header": header.value, "body": .array(body.map(\.value))]
    }

    /// The commands of the body, in order.
    public var commands: [OTACommand] {
        body.compactMap { if case .command(let command) = $0 { command } else { nil } }
    }

    /// The command responses of the body, in order.
    public var responses: [OTACommandResponse] {
        body.compactMap { if case .response(let response) = $0 { response } else { nil } }
    }
}

/// A message's header.
public struct OTAHeader: Hashable, Sendable {
    /// The protocol version: "1.0".
    public var version: String
    /// The service, such as `sync`.
    public var service: String
    /// The account the sender acts for; a server requires it to be the authenticated one.
    public var userid: String
    /// The device's identifier.
    public var deviceid: String
    /// The message's number, from 1, per sender, per session.
    public var sequence: Int
    /// The device's phone number, when it has one.
    public var msisdn: String?
    /// Whether the sender's side of the session is complete.
    public var isFinal: Bool
    /// Set when the previous message was not processed: one status saying why.
    public var result: [OTAResult]?

    /// The protocol version this implementation speaks.
    public static let currentVersion = "1.0"

    /// Makes a header.
    public init(
        version: String = OTAHeader.currentVersion, service: String = "sync", userid: String, deviceid: String,
        sequence: Int, msisdn: String? = nil, isFinal: Bool = false, result: [OTAResult]? = nil
    ) {
        self.version = version
        self.service = service
        self.userid = userid
        self.deviceid = deviceid
        self.sequence = sequence
        self.msisdn = msisdn
        self.isFinal = isFinal
        self.result = result
    }

    init(_ value: SyncValue) throws(OTAMessageError) {
        guard case .dictionary(let header) = value else { throw .badRequest("header must be a dictionary") }
        let fields = OTAFields(header, in: "header")
        version = try fields.requiredString("version")
        service = try fields.requiredString("service")
        userid = try fields.requiredString("userid")
        deviceid = try fields.requiredString("deviceid")
        sequence = try fields.requiredSequence("sequence")
        msisdn = try fields.optionalString("msisdn")
        isFinal = try fields.optionalBool("final") ?? false
        result = try fields.optionalResults("result")
    }

    var value: SyncValue {
        var header: [String: SyncValue] = [
            "version": .string(version), "service": .string(service), "userid": .string(userid),
            "deviceid": .string(deviceid), "sequence": .integer(Int64(sequence)),
        ]
        if let msisdn { header["msisdn"] = .string(msisdn) }
        if isFinal { header["final"] = true }
        if let result { header["result"] = .array(result.map(\.value)) }
        return .dictionary(header)
    }
}

/// One entry of a message's body.
public enum OTABodyEntry: Hashable, Sendable {
    /// A command to process.
    case command(OTACommand)
    /// The answer to a command of the other side's earlier message.
    case response(OTACommandResponse)

    init(_ value: SyncValue, at index: Int) throws(OTAMessageError) {
        guard case .dictionary(let entry) = value else { throw .badRequest("body[\(index)] must be a dictionary") }
        let fields = OTAFields(entry, in: "body[\(index)]")
        if try fields.optionalBool("response") == true {
            self = .response(
                OTACommandResponse(
                    name: try fields.requiredString("name"), sequence: try fields.requiredSequence("sequence"),
                    params: try fields.optionalDictionary("params") ?? [:],
                    results: try fields.optionalResults("result") ?? []))
        } else {
            self = .command(
                OTACommand(
                    name: try fields.requiredString("name"), sequence: try fields.requiredSequence("sequence"),
                    params: try fields.optionalDictionary("params") ?? [:], more: try fields.optionalBool("more") ?? false))
        }
    }

    var value: SyncValue {
        switch self {
        case .command(let command): command.value
        case .response(let response): response.value
        }
    }
}

/// A command: a name, its sequence number, its parameters.
public struct OTACommand: Hashable, Sendable {
    /// `get`, `put`, `delete`, `sync-start`, `sync-changes`, `sync-commit`, `sync-cancel`.
    public var name: String
    /// The command's number, from 1, per sender, per session; every fragment reuses it.
    public var sequence: Int
    /// The parameters.
    public var params: [String: SyncValue]
    /// Whether this is a fragment and more of the command follows.
    public var more: Bool

    /// Makes a command.
    public init(name: String, sequence: Int, params: [String: SyncValue] = [:], more: Bool = false) {
        self.name = name
        self.sequence = sequence
        self.params = params
        self.more = more
    }

    /// The `uri` parameter, when it is a string.
    public var uri: String? { params["uri"]?.stringValue }

    var value: SyncValue {
        var command: [String: SyncValue] = [
            "name": .string(name), "sequence": .integer(Int64(sequence)), "params": .dictionary(params),
        ]
        if more { command["more"] = true }
        return .dictionary(command)
    }
}

/// The answer to a command.
public struct OTACommandResponse: Hashable, Sendable {
    /// The answered command's name.
    public var name: String
    /// The answered command's sequence number.
    public var sequence: Int
    /// Parameters of the answer (`uri`, `anchors`, `idmap`, …).
    public var params: [String: SyncValue]
    /// The statuses: one, or `S_MultiStatus` followed by the failed elements.
    public var results: [OTAResult]

    /// Makes a response.
    public init(name: String, sequence: Int, params: [String: SyncValue] = [:], results: [OTAResult]) {
        self.name = name
        self.sequence = sequence
        self.params = params
        self.results = results
    }

    /// The first status: the command's outcome.
    public var status: OTAStatus? { results.first?.status }

    /// The `uri` parameter, when it is a string.
    public var uri: String? { params["uri"]?.stringValue }

    var value: SyncValue {
        .dictionary([
            "name": .string(name), "sequence": .integer(Int64(sequence)), "params": .dictionary(params),
            "response": true, "result": .array(results.map(\.value)),
        ])
    }
}

/// A status dictionary: the status and, for a failed parameter, which one.
public struct OTAResult: Hashable, Sendable, CustomStringConvertible {
    /// The status.
    public var status: OTAStatus
    /// Words for a person.
    public var detail: String?
    /// The parameter the status is about.
    public var paramName: String?
    /// The element of an array parameter the status is about.
    public var paramIndex: Int?
    /// The key of a dictionary parameter the status is about.
    public var paramKey: String?

    /// Makes a status dictionary.
    public init(
        _ status: OTAStatus, _ detail: String? = nil, paramName: String? = nil, paramIndex: Int? = nil,
        paramKey: String? = nil
    ) {
        self.status = status
        self.detail = detail
        self.paramName = paramName
        self.paramIndex = paramIndex
        self.paramKey = paramKey
    }

    /// `S_OK` with no detail.
    public static let ok = OTAResult(.ok)

    /// The status, parameter and detail, as in `E_BadValue (607) [items/L-3]: …`.
    public var description: String {
        var text = status.description
        if let paramName { text += " [\(paramName)\(paramKey.map { "/\($0)" } ?? "")\(paramIndex.map { "[\($0)]" } ?? "")]" }
        if let detail { text += ": \(detail)" }
        return text
    }

    init(_ value: SyncValue, in path: String) throws(OTAMessageError) {
        guard case .dictionary(let result) = value else { throw .badRequest("\(path) must be a status dictionary") }
        let fields = OTAFields(result, in: path)
        let name = try fields.requiredString("status")
        let code: Int
        switch result["code"] {
        case .integer(let integer)?: code = Int(integer)
        case .string(let text)?:
            guard let parsed = Int(text) else { throw .badRequest("\(path).code must be an integer") }
            code = parsed
        case nil: throw .badRequest("\(path) has no code")
        default: throw .badRequest("\(path).code must be an integer")
        }
        guard let status = OTAStatus(named: name) ?? OTAStatus(code: code) else {
            throw .badRequest("\(path): unknown status \(name) (\(code))")
        }
        self.status = status
        detail = try fields.optionalString("description")
        paramName = try fields.optionalString("param-name")
        paramIndex = try fields.optionalInteger("param-index")
        paramKey = try fields.optionalString("param-key")
    }

    var value: SyncValue {
        var result: [String: SyncValue] = ["status": .string(status.name), "code": .integer(Int64(status.code))]
        if let detail { result["description"] = .string(detail) }
        if let paramName { result["param-name"] = .string(paramName) }
        if let paramIndex { result["param-index"] = .integer(Int64(paramIndex)) }
        if let paramKey { result["param-key"] = .string(paramKey) }
        return .dictionary(result)
    }
}

/// A message or parameter that cannot be used, with the status to answer it with.
public struct OTAMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status and the parameter it is about.
    public var result: OTAResult

    /// Makes an error.
    public init(_ result: OTAResult) { self.result = result }

    /// `E_BadRequest`: the message itself is malformed.
    public static func badRequest(_ detail: String) -> OTAMessageError { .init(OTAResult(.badRequest, detail)) }
    /// `E_MissingParam` for `name`.
    public static func missingParam(_ name: String) -> OTAMessageError {
        .init(OTAResult(.missingParam, "\(name) is required", paramName: name))
    }
    /// `E_ParamError` for `name`: it has the wrong type.
    public static func paramError(_ name: String, _ detail: String) -> OTAMessageError {
        .init(OTAResult(.paramError, detail, paramName: name))
    }
    /// `E_BadValue` for `name`: its value cannot be used.
    public static func badValue(_ name: String, _ detail: String, key: String? = nil) -> OTAMessageError {
        .init(OTAResult(.badValue, detail, paramName: name, paramKey: key))
    }

    /// The status and detail.
    public var description: String { result.description }
}

/// Typed reads of a message's dictionaries; what is missing or mistyped is `E_BadRequest`.
struct OTAFields {
    let fields: [String: SyncValue]
    let path: String

    init(_ fields: [String: SyncValue], in path: String) {
        self.fields = fields
        self.path = path
    }

    func requiredString(_ key: String) throws(OTAMessageError) -> String {
        guard let value = try optionalString(key) else { throw .badRequest("\(path) has no \(key)") }
        return value
    }

    func optionalString(_ key: String) throws(OTAMessageError) -> String? {
        switch fields[key] {
        case nil: return nil
        case .string(let string)?: return string
        default: throw .badRequest("\(path).\(key) must be a string")
        }
    }

    func requiredSequence(_ key: String) throws(OTAMessageError) -> Int {
        guard let value = try optionalInteger(key) else { throw .badRequest("\(path) has no \(key)") }
        guard value >= 1 else { throw .badRequest("\(path).\(key) must be 1 or more") }
        return value
    }

    func optionalInteger(_ key: String) throws(OTAMessageError) -> Int? {
        switch fields[key] {
        case nil: return nil
        case .integer(let integer)?: return Int(integer)
        case .string(let text)?:
            guard let integer = Int(text) else { throw .badRequest("\(path).\(key) must be an integer") }
            return integer
        default: throw .badRequest("\(path).\(key) must be an integer")
        }
    }

    func optionalBool(_ key: String) throws(OTAMessageError) -> Bool? {
        switch fields[key] {
        case nil: return nil
        case .bool(let bool)?: return bool
        default: throw .badRequest("\(path).\(key) must be a Boolean")
        }
    }

    func optionalDictionary(_ key: String) throws(OTAMessageError) -> [String: SyncValue]? {
        switch fields[key] {
        case nil: return nil
        case .dictionary(let dictionary)?: return dictionary
        default: throw .badRequest("\(path).\(key) must be a dictionary")
        }
    }

    func optionalResults(_ key: String) throws(OTAMessageError) -> [OTAResult]? {
        switch fields[key] {
        case nil: return nil
        case .array(let results)?:
            return try results.enumerated().map { index, result throws(OTAMessageError) in
                try OTAResult(result, in: "\(path).\(key)[\(index)]")
            }
        default: throw .badRequest("\(path).\(key) must be an array of statuses")
        }
    }
}
