/// A piece of a command.
public enum IMAPCommandPart: Sendable, Hashable {
    /// Text sent as it is.
    case text(String)
    /// A string, sent as an atom, a quoted string or a literal, whichever it needs.
    case string(String)
    /// A mailbox name: modified UTF-7, then as ``string(_:)``.
    case mailbox(String)
    /// Bytes sent as a literal.
    case literal([UInt8])
    /// A line sent when the server asks for more (`+`) after the command's own literals.
    case continuation(String)
}
