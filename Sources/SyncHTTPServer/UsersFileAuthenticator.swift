import Crypto
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization
public import SyncCore
import SyncHTTP

/// Authenticates HTTP Basic passwords and bearer tokens against a ``UsersFile``.
///
/// ```swift
/// let authenticator = try UsersFileAuthenticator(contentsOf: URL(fileURLWithPath: "users.txt"))
/// let server = HTTPSyncServer(service: router, authenticator: authenticator)
/// ```
///
/// The file is read again whenever it changes (a cheap `stat` before each
/// authentication tells), so `anchorage users add` takes effect on a running
/// server without a restart. A file that does not exist yet means no
/// accounts: every request is refused until one is added.
///
/// Deriving a PBKDF2 key takes tens of milliseconds by design, so a password
/// that was verified once is remembered as a salted SHA-256 in memory, and
/// later requests with the same credentials cost one fast hash. Reading the
/// file again forgets what was remembered.
public final class UsersFileAuthenticator: SyncAuthenticator {
    private let state: Mutex<State>
    /// The file the users come from, if any.
    public let url: URL?
    /// `url`'s path, made once: `URL.path` builds a new string each time, and each request looks at the file.
    private let path: String?
    private let reloadFailed: @Sendable (UsersFileError) -> Void

    private struct State {
        var users: UsersFile
        /// The version of the file `users` were read from; `nil` for no file.
        var fileVersion: FileVersion?
        var remembered: [String: [UInt8]] = [:]
        let pepper: [UInt8] = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
    }

    /// Makes an authenticator over `users`.
    public init(users: UsersFile) {
        self.url = nil
        self.path = nil
        self.reloadFailed = { _ in }
        self.state = Mutex(State(users: users))
    }

    /// Reads the users file at `url`, if there is one, and follows its changes.
    /// - Parameter reloadFailed: Called when the changed file cannot be read;
    ///   the users read before stay in force until it can.
    /// - Throws: ``UsersFileError`` for a file that exists but cannot be read.
    public init(contentsOf url: URL, reloadFailed: @escaping @Sendable (UsersFileError) -> Void = { _ in })
        throws(UsersFileError)
    {
        let path = url.path
        self.url = url
        self.path = path
        self.reloadFailed = reloadFailed
        let version = FileVersion.current(atPath: path)
        self.state = Mutex(State(users: version == nil ? UsersFile() : try UsersFile.load(from: url), fileVersion: version))
    }

    /// Whether any account can sign in now.
    public var hasAccounts: Bool { state.withLock { $0.users.entries.contains(where: \.isSecret) } }

    /// Whether `account` holds `role` now (the file is read again first when it has changed).
    public func account(_ account: AccountID, has role: UsersFile.Role) -> Bool {
        reloadIfChanged()
        return state.withLock { $0.users.has(role, account) }
    }

    /// The accounts of the file now, sorted (the file is read again first when it has changed).
    public var accounts: [AccountID] {
        reloadIfChanged()
        return state.withLock { $0.users.accounts }
    }

    /// Reads the file again now (a missing file means no accounts).
    /// - Throws: ``UsersFileError``; the old users stay in force then.
    public func reload() throws(UsersFileError) {
        guard let url, let path else { return }
        let version = FileVersion.current(atPath: path)
        let users = version == nil ? UsersFile() : try UsersFile.load(from: url)
        state.withLock { $0 = State(users: users, fileVersion: version) }
    }

    /// Reads the file again when it has changed since it was last read.
    private func reloadIfChanged() {
        guard let path else { return }
        let version = FileVersion.current(atPath: path)
        guard state.withLock({ $0.fileVersion != version }) else { return }
        do {
            try reload()
        } catch {
            // Not again for this version of the file: the next change is read.
            state.withLock { $0.fileVersion = version }
            reloadFailed(error)
        }
    }

    /// The account the credentials prove, or `nil` for none or wrong ones.
    public func authenticate(_ credentials: Credentials?) async throws -> AccountID? {
        reloadIfChanged()
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
