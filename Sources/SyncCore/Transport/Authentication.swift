/// Decides which account a request acts for.
///
/// Transport adapters call the authenticator before the service; `nil`
/// credentials or wrong ones give 401. `SyncHTTPServer` ships `UsersFileAuthenticator`
/// (HTTP Basic against salted password hashes, and bearer tokens).
public protocol SyncAuthenticator: Sendable {
    /// The account the credentials prove, or `nil` when they prove none.
    /// - Throws: when the authenticator itself fails (its backing store is unreachable).
    func authenticate(_ credentials: Credentials?) async throws -> AccountID?
}

/// Accepts every request as one fixed account: for tests and single-user demos only.
public struct SingleAccountAuthenticator: SyncAuthenticator {
    /// The account every request acts for.
    public var account: AccountID
    /// Makes the authenticator.
    public init(account: AccountID) { self.account = account }
    /// Always `account`.
    public func authenticate(_ credentials: Credentials?) async throws -> AccountID? { account }
}

/// Accepts fixed user names and passwords, or tokens, held in memory: for tests.
///
/// For a server, use `UsersFileAuthenticator` from `SyncHTTPServer`, which keeps only salted hashes.
public struct StaticAuthenticator: SyncAuthenticator {
    /// Passwords by user name; the user name is the account.
    public var passwords: [String: String]
    /// Accounts by bearer token.
    public var tokens: [String: AccountID]

    /// Makes the authenticator.
    public init(passwords: [String: String] = [:], tokens: [String: AccountID] = [:]) {
        self.passwords = passwords
        self.tokens = tokens
    }

    /// The account of matching credentials.
    public func authenticate(_ credentials: Credentials?) async throws -> AccountID? {
        switch credentials {
        case .basic(let user, let password):
            guard let expected = passwords[user], constantTimeEquals(Array(expected.utf8), Array(password.utf8)) else {
                return nil
            }
            return AccountID(user)
        case .bearer(let token):
            return tokens[token]
        case nil:
            return nil
        }
    }
}

/// Compares two byte strings in time that depends only on their lengths (for the authenticators of
/// this package: `SyncHTTPServer`'s users file compares hashes with it).
package func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
    return difference == 0
}
