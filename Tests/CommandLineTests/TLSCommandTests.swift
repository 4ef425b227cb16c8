import Foundation
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve --tls-cert --tls-key` and `anchorage sync --ca-file`, as
/// separate processes with a certificate authority made for the test.
@Suite("anchorage over HTTPS")
struct TLSCommandTests {
    static let password = "tls-cli-password"

    /// What `records save` needs in each stack: the device options first, then the record.
    static func save(_ stack: String) -> [String] {
        switch stack {
        case "appsync": ["--stack", "appsync", "booking", "--", "pk=101", "guest=Ada"]
        case "ota": ["--stack", "ota", "--user", "ada", "com.apple.contacts.Contact", "--", "first name=Ada"]
        default: ["Contact", "--", "name=Ada"]
        }
    }

    /// `records list` in each stack, before the device options.
    static func list(_ stack: String) -> [String] {
        switch stack {
        case "appsync": ["records", "list", "--stack", "appsync", "booking"]
        case "ota": ["records", "list", "--stack", "ota"]
        default: ["records", "list", "Contact"]
        }
    }

    /// Starts `anchorage serve` over HTTPS on a memory store with the account `ada`.
    static func serveHTTPS(
        _ tool: AnchorageTool, _ certificates: TestCertificates, in folder: TemporaryFolder
    ) async throws -> AnchorageTool.Server {
        let users = folder.path("users.txt")
        let added = try await tool.run(
            ["users", "add", "ada", "--file", users, "--iterations", "1000"], input: Array("\(password)\n".utf8))
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        return try await tool.serve([
            "--store", "memory", "--users", users, "--log-level", "warning",
            "--tls-cert", certificates.certificateFile, "--tls-key", certificates.keyFile,
        ])
    }

    /// Runs `anchorage` with ada's password and no token.
    static func run(_ tool: AnchorageTool, _ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await tool.run(arguments, environment: ["ANCHORAGE_PASSWORD": password, "ANCHORAGE_TOKEN": ""])
    }

    static func isOneLine(_ text: String) -> Bool {
        text.hasPrefix("anchorage: ") && text.hasSuffix("\n") && text.dropLast().split(separator: "\n").count == 1
    }

    @Test("sync over https:// with --ca-file carries a record to another device", arguments: ["aquasync", "appsync", "ota"])
    func syncOverHTTPS(stack: String) async throws {
        let tool = try AnchorageTool()
        let certificates = try await TestCertificates.make()
        let folder = try TemporaryFolder("tls-sync-\(stack)")
        let server = try await Self.serveHTTPS(tool, certificates, in: folder)
        #expect(server.url.scheme == "https", "\(server.url)")
        #expect(String(decoding: server.process.standardOutput, as: UTF8.self).contains("serving on https://127.0.0.1:"))

        let deviceA = ["--store", "sqlite:" + folder.path("a.sqlite")]
        let deviceB = ["--store", "sqlite:" + folder.path("b.sqlite")]
        let saved = try await Self.run(tool, ["records", "save"] + deviceA + Self.save(stack))
        try #require(saved.status == 0, "records save: \(saved.errorText)")

        let sync = ["sync", "--stack", stack, "--server", server.url.absoluteString, "--ca-file", certificates.caFile, "--user", "ada"]
        let sent = try await Self.run(tool, sync + deviceA)
        #expect(sent.status == 0, "sync from A: \(sent.errorText)")
        #expect(sent.outputText.hasPrefix("synced with https://"), "\(sent.outputText)")
        let received = try await Self.run(tool, sync + deviceB)
        #expect(received.status == 0, "sync to B: \(received.errorText)")
        let listed = try await Self.run(tool, Self.list(stack) + deviceB)
        #expect(listed.status == 0, "\(listed.errorText)")
        #expect(listed.outputText.split(separator: "\n").count == 1, "one record on B: \(listed.outputText)")
        #expect(listed.outputText.contains("Ada"), "\(listed.outputText)")
        #expect(try await server.process.terminate() == 0)
    }

    @Test(
        "a server whose certificate is not trusted is one line and exit status 69, at once",
        arguments: ["no --ca-file", "another CA"])
    func untrustedServer(trusting: String) async throws {
        let tool = try AnchorageTool()
        let certificates = try await TestCertificates.make()
        let folder = try TemporaryFolder("tls-untrusted")
        let server = try await Self.serveHTTPS(tool, certificates, in: folder)
        let caFile = trusting == "another CA" ? ["--ca-file", certificates.otherCAFile] : []
        let started = ContinuousClock.now
        let outcome = try await Self.run(
            tool,
            ["sync", "--server", server.url.absoluteString, "--user", "ada", "--store", "sqlite:" + folder.path("d.sqlite")]
                + caFile)
        let took = ContinuousClock.now - started
        #expect(outcome.status == 69, "\(outcome.errorText)")
        #expect(Self.isOneLine(outcome.errorText), "one line: \(outcome.errorText)")
        #expect(outcome.errorText.contains("the server's certificate is not trusted"), "\(outcome.errorText)")
        #expect(outcome.errorText.contains("--ca-file"), "\(outcome.errorText)")
        #expect(outcome.outputText.isEmpty)
        #expect(took < .seconds(30), "refused at once, not after retries until the time-out: \(took)")
        #expect(try await server.process.terminate() == 0)
    }

    @Test("a certificate or key that is missing, not PEM or not a pair stops serve before it listens, with one line")
    func badCertificateOrKey() async throws {
        let tool = try AnchorageTool()
        let certificates = try await TestCertificates.make()
        let folder = try TemporaryFolder("tls-bad-files")
        let missing = folder.path("missing.pem")
        let cases: [(cert: String, key: String, status: Int32, says: String)] = [
            (missing, certificates.keyFile, 66, missing),
            (certificates.certificateFile, missing, 66, missing),
            (certificates.keyFile, certificates.keyFile, 65, "no PEM certificate"),
            (certificates.certificateFile, certificates.caFile, 65, "no unencrypted PEM private key"),
            (certificates.certificateFile, certificates.otherKeyFile, 65, "does not belong to the certificate"),
        ]
        for (cert, key, status, says) in cases {
            let outcome = try await tool.run(
                ["serve", "--port", "0", "--store", "memory", "--tls-cert", cert, "--tls-key", key], workingDirectory: folder.path)
            #expect(outcome.status == status, "\(cert) \(key): \(outcome.errorText)")
            #expect(Self.isOneLine(outcome.errorText) && outcome.errorText.contains(says), "\(outcome.errorText)")
            #expect(!outcome.outputText.contains("serving on"), "it did not listen: \(outcome.outputText)")
        }

        let alone = try await tool.run(["serve", "--port", "0", "--store", "memory", "--tls-cert", certificates.certificateFile])
        #expect(alone.status == 64, "\(alone.errorText)")
        #expect(Self.isOneLine(alone.errorText) && alone.errorText.contains("--tls-key"), "\(alone.errorText)")

        let plainWithCA = try await tool.run(
            ["sync", "--server", "http://127.0.0.1:9", "--ca-file", certificates.caFile, "--store", "memory", "--user", "ada"])
        #expect(plainWithCA.status == 64, "\(plainWithCA.errorText)")
        #expect(Self.isOneLine(plainWithCA.errorText) && plainWithCA.errorText.contains("--ca-file"), "\(plainWithCA.errorText)")

        let unreadableCA = try await Self.run(
            tool, ["sync", "--server", "https://127.0.0.1:9", "--ca-file", missing, "--store", "memory", "--user", "ada"])
        #expect(unreadableCA.status == 66, "\(unreadableCA.errorText)")
        #expect(Self.isOneLine(unreadableCA.errorText) && unreadableCA.errorText.contains(missing), "\(unreadableCA.errorText)")
    }

    @Test("plain HTTP on an address other machines can reach prints one warning line")
    func warningOffLoopback() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("tls-warning")
        let users = folder.path("users.txt")
        let added = try await tool.run(
            ["users", "add", "ada", "--file", users, "--iterations", "1000"], input: Array("\(Self.password)\n".utf8))
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        let server = try await tool.serve(["--host", "0.0.0.0", "--store", "memory", "--users", users, "--log-level", "warning"])
        let errorText = String(decoding: server.process.standardError, as: UTF8.self)
        #expect(try await server.process.terminate() == 0)
        let lines = errorText.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(errorText)")
        #expect(lines.first?.hasPrefix("anchorage: warning: serving plain HTTP on 0.0.0.0") == true, "\(errorText)")
        #expect(errorText.contains("--tls-cert"), "\(errorText)")
    }

    @Test("serve and sync --help describe TLS")
    func help() async throws {
        let tool = try AnchorageTool()
        let serve = try await tool.run(["serve", "--help"])
        #expect(serve.outputText.contains("--tls-cert") && serve.outputText.contains("--tls-key"), "\(serve.outputText)")
        let sync = try await tool.run(["sync", "--help"])
        #expect(sync.outputText.contains("--ca-file") && sync.outputText.contains("https://"), "\(sync.outputText)")
    }
}
