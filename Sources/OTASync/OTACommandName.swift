import SyncCore

/// The commands of the protocol, by their names on the wire: the one place
/// those names are spelled. A name not listed here is an unknown command
/// (`E_UnknownCommand`), so ``OTACommand/name`` stays a string.
enum OTACommandName: String, Sendable, CaseIterable {
    /// Reads a resource (`deviceinfo`, a dataclass's filter).
    case get
    /// Writes a resource.
    case put
    /// Removes a resource.
    case delete
    /// Starts a dataclass's sync: negotiates its mode.
    case syncStart = "sync-start"
    /// Carries a side's changes of a dataclass, in fragments when they do not fit one message.
    case syncChanges = "sync-changes"
    /// Ends a dataclass's sync with the final server anchor.
    case syncCommit = "sync-commit"
    /// Stops a dataclass's sync.
    case syncCancel = "sync-cancel"

    /// What the names of a dataclass's sync commands begin with. Once one of them fails, the
    /// later ones of that dataclass in the same message are not processed — known names or not.
    static let syncPrefix = "sync-"
}

extension OTACommand {
    /// Makes a command of a known name.
    init(_ name: OTACommandName, sequence: Int, params: [String: SyncValue] = [:], more: Bool = false) {
        self.init(name: name.rawValue, sequence: sequence, params: params, more: more)
    }

    /// The command's name when it is one the protocol knows.
    var knownName: OTACommandName? { OTACommandName(rawValue: name) }

    /// The `uri` parameter, which the command requires.
    /// - Throws: ``OTAMessageError`` when it is missing or not a string.
    func requiredURI() throws(OTAMessageError) -> String {
        switch params["uri"] {
        case nil: throw .missingParam("uri")
        case .string(let uri)?: return uri
        default: throw .paramError("uri", "uri must be a string")
        }
    }
}

extension OTACommandResponse {
    /// The answer to `command`: its name and sequence, and its `uri` unless `params` name one.
    init(answering command: OTACommand, _ result: OTAResult, params: [String: SyncValue] = [:]) {
        var params = params
        if let uri = command.params["uri"], params["uri"] == nil { params["uri"] = uri }
        self.init(name: command.name, sequence: command.sequence, params: params, results: [result])
    }

    /// The answered command's name when it is one the protocol knows.
    var knownName: OTACommandName? { OTACommandName(rawValue: name) }
}
