import Foundation
import SyncTesting

/// A private certificate authority and a server certificate it signed for
/// `127.0.0.1` and `localhost`, made with the system's `openssl` for one test,
/// in a folder removed with the value; and a second authority and key that
/// have nothing to do with them, for the refusals.
///
/// ```swift
/// let certificates = try await TestCertificates.make()
/// let server = try await tool.serve(["--tls-cert", certificates.certificateFile, "--tls-key", certificates.keyFile, …])
/// let outcome = try await tool.run(["sync", "--server", server.url.absoluteString, "--ca-file", certificates.caFile, …])
/// ```
public struct TestCertificates: Sendable {
    /// The folder the files are in.
    public let folder: TemporaryFolder
    /// The certificate authority's certificate, PEM: what a client trusts.
    public var caFile: String { folder.path("ca.pem") }
    /// The server's certificate, PEM, signed by ``caFile``.
    public var certificateFile: String { folder.path("server.pem") }
    /// The server certificate's private key, PEM.
    public var keyFile: String { folder.path("server.key") }
    /// Another authority's certificate, PEM: it did not sign ``certificateFile``.
    public var otherCAFile: String { folder.path("other-ca.pem") }
    /// A private key that does not belong to ``certificateFile``.
    public var otherKeyFile: String { folder.path("other-ca.key") }

    /// Makes the authorities, the server's key and its certificate (valid for 30 days).
    /// - Throws: ``ChildProcess/LaunchError`` when `openssl` cannot be run or one of its steps fails.
    public static func make() async throws -> TestCertificates {
        let certificates = TestCertificates(folder: try TemporaryFolder("tls"))
        let folder = certificates.folder
        try write(
            """
            [req]
            distinguished_name = name
            prompt = no
            x509_extensions = authority
            [name]
            CN = Anchorage Test CA
            [authority]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            """, to: folder.path("ca.cnf"))
        try write(
            """
            [req]
            distinguished_name = name
            prompt = no
            [name]
            CN = localhost
            """, to: folder.path("server.cnf"))
        try write(
            """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost
            authorityKeyIdentifier = keyid
            """, to: folder.path("server-extensions.cnf"))
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for name in ["ca", "other-ca"] {
            try await openssl(
                ["req", "-x509", "-config", "ca.cnf"] + curve
                    + ["-keyout", "\(name).key", "-out", "\(name).pem", "-days", "30"], in: folder)
        }
        try await openssl(
            ["req", "-new", "-config", "server.cnf"] + curve + ["-keyout", "server.key", "-out", "server.csr"], in: folder)
        try await openssl(
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "1", "-days", "30",
                "-extfile", "server-extensions.cnf", "-out", "server.pem",
            ], in: folder)
        return certificates
    }

    private static func openssl(_ arguments: [String], in folder: TemporaryFolder) async throws {
        let outcome = try await ChildProcess.run("openssl", arguments: arguments, workingDirectory: folder.path)
        guard outcome.status == 0 else {
            throw ChildProcess.LaunchError(
                description: "openssl \(arguments.joined(separator: " ")) exited with \(outcome.status): \(outcome.errorText)")
        }
    }

    private static func write(_ text: String, to path: String) throws {
        try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }
}
