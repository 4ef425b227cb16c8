/// A users file line that cannot be read, an entry that cannot be made, or a file that cannot be written.
public struct UsersFileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 1-based line number, or 0 when the error is not about a line.
    public var line: Int
    /// What is wrong.
    public var message: String
    /// Makes an error.
    public init(line: Int, _ message: String) {
        self.line = line
        self.message = message
    }
    /// `line N: message`, or the message alone.
    public var description: String { line > 0 ? "line \(line): \(message)" : message }
}
