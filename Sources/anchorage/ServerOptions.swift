import ArgumentParser
import Foundation
import SyncCore
import SyncHTTP
import SyncHTTPClient

/// `--server` and `--ca-file`: how a command reaches a sync server, over HTTP or HTTPS.
struct ServerOptions: ParsableArguments {
    @Option(help: "The server's address, such as http://127.0.0.1:8080 or https://sync.example.com:8443.")
    var server: String

    @Option(
        name: .customLong("ca-file"),
        help: """
            https:// only: a PEM file of the certificate authorities to trust instead of the system's, for a server \
            whose certificate your own CA signed.
            """)
    var caFile: String?

    @Flag(
        inversion: .prefixedNo,
        help: """
            Ask for compressed answers (Accept-Encoding: gzip, deflate) and compress request bodies of 1 KiB or \
            more for a server that says it reads them.
            """)
    var compression = true

    func validate() throws {
        guard let url = URL(string: server), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else {
            throw ValidationError("--server must be an http:// or https:// address, such as https://sync.example.com:8443")
        }
        if caFile != nil && scheme == "http" {
            throw ValidationError("--ca-file is for an https:// server; \(server) is plain HTTP")
        }
    }

    /// The server's address.
    var url: URL {
        get throws {
            guard let url = URL(string: server) else { throw ValidationError("--server must be an http:// or https:// address") }
            return url
        }
    }

    /// Whether the server is reached over HTTPS.
    var isHTTPS: Bool { server.lowercased().hasPrefix("https:") }

    /// Runs `body` with a transport to the server, and shuts down the client
    /// made for it when `body` returns or throws.
    ///
    /// Over HTTPS the transport trusts the certificate authorities of
    /// --ca-file, or the system's, and a certificate it does not trust fails
    /// at once instead of being tried again until the time-out.
    /// - Throws: one line and exit status 66 when --ca-file cannot be read or holds no certificate.
    func withTransport<Result>(_ body: (HTTPClientTransport) async throws -> Result) async throws -> Result {
        let url = try self.url
        let configuration = HTTPClientTransport.Configuration(
            acceptsCompressedAnswers: compression, compressRequestsAbove: compression ? 1_024 : nil)
        guard isHTTPS else { return try await body(HTTPClientTransport(baseURL: url, configuration: configuration)) }
        let trustRoots: HTTPClientTransport.TrustRoots
        if let caFile {
            do {
                trustRoots = try .certificates(pemFile: caFile)
            } catch {
                throw failure("--ca-file: \(error.message)", code: error.code == .unreadable ? 66 : 65)
            }
        } else {
            trustRoots = .system
        }
        let transport = HTTPClientTransport(baseURL: url, configuration: configuration, trustRoots: trustRoots)
        let result: Result
        do {
            result = try await body(transport)
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try await transport.shutdown()
        return result
    }

    /// The one line for a client error, without library names or doubled prefixes: for a server that
    /// cannot be reached, the reason (`cannot connect to 127.0.0.1:39377: connection refused`); for
    /// refused credentials, whose (`the server refused user ada's password`); for a TLS handshake that
    /// failed, what to do about it (pass the CA with --ca-file); otherwise `what failed: reason`.
    func describe(_ error: SyncClientError, what: String, credentials: Credentials? = nil) -> String {
        switch error.code {
        case .tlsFailed:
            break
        case .connectionFailed:
            return (error.underlying as? TransportError)?.message ?? "\(what) failed: \(error.message)"
        case .unauthorized:
            switch credentials {
            case .basic(let username, _)?: return "the server refused user \(username)'s password"
            case .bearer?: return "the server refused the bearer token in ANCHORAGE_TOKEN (revoked, or for another server)"
            case nil: return "the server refused the credentials"
            }
        default:
            return "\(what) failed: \(error.message)"
        }
        let reason = (error.underlying as? TransportError)?.message ?? error.message
        let advice: String
        if reason.contains("certificate is not trusted") {
            advice = "pass the certificate authority that signed it with --ca-file" + (caFile.map { " (the one in \($0) did not)" } ?? "")
        } else if reason.contains("does not name") {
            advice = "use a name or address in its subject alternative names in --server"
        } else {
            advice = "check that the server serves HTTPS (anchorage serve --tls-cert) at that address"
        }
        return "\(what) failed: \(server): \(reason); \(advice)"
    }
}
