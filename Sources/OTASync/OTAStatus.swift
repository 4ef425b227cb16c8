/// A status of the OTA protocol: a normative name and its code.
///
/// The whole table is ``table``, the one place to change a code:
///
/// ```swift
/// OTAStatus.badValue.code                  // 607
/// OTAStatus(named: "E_StateError")?.code   // 610
/// OTAStatus(code: 602) == .notCompleted    // true
/// ```
///
/// Names starting with `S_` are successes; `E_` names are errors. Codes 7xx
/// are server errors that end the session (docs/ota.md).
public struct OTAStatus: Hashable, Sendable, CustomStringConvertible {
    /// The normative name, such as `S_OK`.
    public let name: String
    /// The numeric code, such as 600.
    public let code: Int

    /// Every status, name and code, in the patent's order.
    public static let table: [(name: String, code: Int)] = [
        ("S_OK", 600), ("S_MultiStatus", 601), ("S_NotCompleted", 602), ("E_NotFound", 603),
        ("E_NotAllowed", 604), ("E_MissingParam", 605), ("E_ParamError", 606), ("E_BadValue", 607),
        ("E_UnknownCommand", 608), ("E_CommandNotProcessed", 609), ("E_StateError", 610),
        ("E_LimitExceeded", 611), ("E_VersionNotSupported", 612), ("E_NegotiationFailed", 613),
        ("E_NotSupported", 614), ("E_Failed", 615), ("E_Canceled", 616),
        ("E_ServiceBusy", 700), ("E_ServiceUnavailable", 701), ("E_ServiceError", 702),
        ("E_BadRequest", 703), ("E_RetryLater", 704),
    ]

    /// The status with this name, if the table has it.
    public init?(named name: String) {
        guard let entry = Self.table.first(where: { $0.name == name }) else { return nil }
        self.name = entry.name
        self.code = entry.code
    }

    /// The status with this code, if the table has it.
    public init?(code: Int) {
        guard let entry = Self.table.first(where: { $0.code == code }) else { return nil }
        self.name = entry.name
        self.code = entry.code
    }

    private init(_ name: String) {
        self.init(named: name)!  // every name below is in the table
    }

    /// Whether this is a success (`S_`) status.
    public var isSuccess: Bool { name.hasPrefix("S_") }

    /// The name and code, as in `E_BadValue (607)`.
    public var description: String { "\(name) (\(code))" }

    /// Done.
    public static let ok = OTAStatus("S_OK")
    /// Some elements failed: the statuses that follow name them.
    public static let multiStatus = OTAStatus("S_MultiStatus")
    /// Received, not finished yet (changes wait for the other dataclasses' pull phase).
    public static let notCompleted = OTAStatus("S_NotCompleted")
    /// The URI is unknown.
    public static let notFound = OTAStatus("E_NotFound")
    /// The operation is not permitted (a disabled dataclass, a foreign user id).
    public static let notAllowed = OTAStatus("E_NotAllowed")
    /// A required parameter is missing.
    public static let missingParam = OTAStatus("E_MissingParam")
    /// A parameter has the wrong type.
    public static let paramError = OTAStatus("E_ParamError")
    /// A parameter has a value that cannot be used.
    public static let badValue = OTAStatus("E_BadValue")
    /// The command's name is unknown.
    public static let unknownCommand = OTAStatus("E_UnknownCommand")
    /// Not processed because an earlier command of the same family failed.
    public static let commandNotProcessed = OTAStatus("E_CommandNotProcessed")
    /// The command came out of its state machine's order.
    public static let stateError = OTAStatus("E_StateError")
    /// A size or count limit was exceeded.
    public static let limitExceeded = OTAStatus("E_LimitExceeded")
    /// The dataclass version is not supported.
    public static let versionNotSupported = OTAStatus("E_VersionNotSupported")
    /// The sync mode was refused; the response's anchors carry the mode wanted.
    public static let negotiationFailed = OTAStatus("E_NegotiationFailed")
    /// The dataclass, direction or feature is not supported.
    public static let notSupported = OTAStatus("E_NotSupported")
    /// The command failed.
    public static let failed = OTAStatus("E_Failed")
    /// The dataclass's sync was canceled.
    public static let canceled = OTAStatus("E_Canceled")
    /// The server is busy: try later.
    public static let serviceBusy = OTAStatus("E_ServiceBusy")
    /// The service is unavailable.
    public static let serviceUnavailable = OTAStatus("E_ServiceUnavailable")
    /// The server failed.
    public static let serviceError = OTAStatus("E_ServiceError")
    /// The message is malformed.
    public static let badRequest = OTAStatus("E_BadRequest")
    /// Try again later.
    public static let retryLater = OTAStatus("E_RetryLater")
}
