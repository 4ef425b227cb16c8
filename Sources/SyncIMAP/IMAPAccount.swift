/// Where an IMAP account is and how to log in.
public struct IMAPAccount: Sendable, Hashable {
    /// The server's host name or address.
    public var host: String
    /// The server's port (143, or 993 for ``IMAPSecurity/tls``).
    public var port: Int
    /// The user name.
    public var user: String
    /// The password.
    public var password: String
    /// TLS from the start, STARTTLS, or none.
    public var security: IMAPSecurity

    /// Makes an account.
    public init(host: String, port: Int, user: String, password: String, security: IMAPSecurity = .startTLSIfOffered) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.security = security
    }

    /// `user@host:port`, the account's name in the local store.
    public var name: String { "\(user)@\(host):\(port)" }

    /// Connects, logs in (AUTHENTICATE PLAIN when offered, else LOGIN) and enables QRESYNC when the server has it.
    public func connect(configuration: IMAPConnection.Configuration = .init()) async throws -> IMAPConnection {
        let connection = try await IMAPConnection.connect(host: host, port: port, security: security, configuration: configuration)
        do {
            var capabilities = await connection.capabilities
            if capabilities.isEmpty { capabilities = try await connection.capability() }
            do {
                if capabilities.contains("AUTH=PLAIN") {
                    try await connection.authenticatePlain(user: user, password: password)
                } else {
                    try await connection.login(user: user, password: password)
                }
            } catch IMAPError.Code.commandFailed {
                throw IMAPError(.authenticationFailed, "the IMAP server refused user \(user)'s password")
            }
            if await connection.capabilities.contains("QRESYNC") { try await connection.enable(["QRESYNC"]) }
        } catch {
            await connection.close()
            throw error
        }
        return connection
    }
}

/// How a connection protects itself.
public enum IMAPSecurity: String, Sendable, Hashable, CaseIterable {
    /// Plain text (a test server on loopback; never across a network).
    case none
    /// TLS from the first byte (imaps, port 993).
    case tls
    /// Plain text, then `STARTTLS` before logging in; refused when the server does not offer it.
    case startTLS
    /// `STARTTLS` when the server offers it, plain text otherwise.
    case startTLSIfOffered
}
