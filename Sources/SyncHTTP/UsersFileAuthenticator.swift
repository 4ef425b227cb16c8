import Crypto
public import FoundationEssentials
import Synchronization
public import SyncCore

/// Authenticates HTTP Basic passwords and bearer tokens against a ``UsersFile``.
///
/// ```swift
/// let authenticator = try UsersFileAuthenticator(contentsOf: URL(fileURLWithPath: "users.txt"))
/// let server = HTTPSyncServer(service: router, authenticator: authenticator)
/// ```
///
/// Deriving a PBKDF2 key takes tens of milliseconds by design, so a password
/// that was verified once is remembered as a salted SHA-256 in memory, and
/// later requests with the same credentials cost one fast hash. Call
/// ``reload()`` after the file changes; it also forgets what was remembered.
public final class UsersFileAuthenticator: SyncAuthenticator {
    private let state: Mutex<State>
    /// The file the users come from, if any.
    public let url: URL?

    private struct State {
        var users: UsersFile
        var remembered: [String: [UInt8]] = [:]
        let pepper: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// Makes an authenticator over `users`.
    public init(users: UsersFile) {
        self.url = nil
        self.state = Mutex(State(users: users))
    }

    /// Reads the users file at `url`.
    /// - Throws: ``UsersFileError`` or the I/O error.
    public init(contentsOf url: URL) throws {
        self.url = url
        self.state = Mutex(State(users: try UsersFile.load(from: url)))
    }

    /// Reads the file again.
    /// - Throws: ``UsersFileError`` or the I/O error; the old users stay in force then.
    public func reload() throws {
        guard let url else { return }
        let users = try UsersFile.load(from: url)
        state.withLock { $0 = State(users: users) }
    }

    /// The account the credentials prove, or `nil` for none or wrong ones.
    public func authenticate(_ credentials: Credentials?) async throws -> AccountID? {
        guard let credentials else { return nil }
        guard case .basic(let username, let password) = credentials else {
            return state.withLock { $0.users }.account(for: credentials)
        }
        let (users, pepper, remembered) = state.withLock { ($0.users, $0.pepper, $0.remembered[username]) }
        let fingerprint = Array(SHA256.hash(data: pepper + Array(username.utf8) + [0] + Array(password.utf8)))
        if let remembered, constantTimeEquals(remembered, fingerprint) { return AccountID(username) }
        guard let account = users.account(for: credentials) else { return nil }
        state.withLock { $0.remembered[username] = fingerprint }
        return account
    }
}
