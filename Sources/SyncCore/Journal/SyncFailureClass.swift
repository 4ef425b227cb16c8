/// The three ways a sync treats a failure, the same in every stack.
///
/// ```swift
/// switch SyncFailureClass(of: error) {
/// case .retryLater: scheduleRetry()                // every journal entry is kept
/// case .refused: tellUser(error)                   // the refused change is dropped
/// case .conflict: break                            // the conflict policy decides
/// }
/// ```
public enum SyncFailureClass: String, Sendable, Hashable, CustomStringConvertible {
    /// The failure may pass (no connection, 5xx, 429, a full disk on the
    /// device, a store that is busy): keep every entry and sync again later.
    case retryLater = "retry later"
    /// The server refused the change for good (a 4xx other than 401, 408, 409,
    /// 412 and 429): drop the entry and tell the application why.
    case refused = "refused"
    /// The server holds another version (409, 412): the conflict policy decides.
    case conflict = "conflict"

    /// The class of a failure met while syncing.
    public init(of error: any Error) {
        switch error {
        case let error as SyncClientError:
            // A protocol's own status outside HTTP's range (OTA's 6xx and 7xx) is not read as HTTP's: the code decides.
            self = Self(status: error.status.flatMap { (100..<600).contains($0) ? $0 : nil }, code: error.code)
        case let error as StoreError:
            self = error.code == .invalidArgument || error.code == .quotaExceeded ? .refused : .retryLater
        default:
            self = .retryLater
        }
    }

    /// The class of a server's answer to one change (`status`, HTTP's), or of a
    /// client error's code when no answer came: refused for
    /// ``SyncClientError/Code/invalidRequest`` and ``SyncClientError/Code/refused``,
    /// retry later for every other.
    public init(status: Int?, code: SyncClientError.Code? = nil) {
        switch status {
        case 409?, 412?: self = .conflict
        case 401?, 408?, 429?: self = .retryLater
        case let status? where (400..<500).contains(status): self = .refused
        case .some: self = .retryLater
        case nil: self = code == .invalidRequest || code == .refused ? .refused : .retryLater
        }
    }

    /// The class's name.
    public var description: String { rawValue }
}
