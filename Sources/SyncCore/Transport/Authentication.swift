/// Decides which account a request acts for.
///
/// Transport adapters call the authenticator before the service; `nil`
/// credentials or wrong ones give 401. `SyncHTTP` ships `UsersFileAuthenticator`
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
/// For a server, use `UsersFileAuthenticator` from `SyncHTTP`, which keeps only salted hashes.
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

/// Compares two byte strings in time that depends only on their lengths.
public func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
    return difference == 0
}

/// Calls a service in-process, through the same authentication an HTTP server
/// applies: the transport for tests and for apps that embed the server.
///
/// ```swift
/// let transport = LoopbackTransport(service: router, authenticator: StaticAuthenticator(passwords: ["ada": "pw"]))
/// ```
public struct LoopbackTransport: SyncClientTransport {
    /// The service called.
    public let service: any SyncService
    /// The authenticator applied before the service.
    public let authenticator: any SyncAuthenticator
    /// The largest request body accepted (413 above it).
    public let maxRequestBytes: Int

    /// Makes a loopback transport.
    public init(service: any SyncService, authenticator: any SyncAuthenticator, maxRequestBytes: Int = 64 << 20) {
        self.service = service
        self.authenticator = authenticator
        self.maxRequestBytes = maxRequestBytes
    }

    /// Authenticates the request and hands it to the service, as a server would.
    public func send(_ request: SyncRequest) async throws -> SyncResponse {
        guard request.body.count <= maxRequestBytes else {
            return SyncServiceError.payloadTooLarge(limit: maxRequestBytes).response
        }
        guard let account = try await authenticator.authenticate(request.credentials) else {
            return SyncServiceError.unauthorized().response
        }
        return await service.respond(to: request, context: ServiceContext(account: account))
    }
}
