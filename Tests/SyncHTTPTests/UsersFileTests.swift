import Foundation
import SyncCore
import SyncHTTPServer
import Testing

@Suite("Users file")
struct UsersFileTests {
    static func temporaryURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-users-\(UUID().uuidString).txt")
    }

    @Test("render and parse round-trip, and the parsed file checks passwords and tokens")
    func roundTrip() throws {
        let users = try UsersFile().adding(account: "ada", password: "pässword", iterations: 1_000)
            .addingToken(account: "ci-bot", token: "abc123")
            .adding(account: "ada", password: "second one", iterations: 1_200)
        let parsed = try UsersFile.parse(users.render())
        #expect(parsed == users)
        #expect(parsed.accounts == ["ada", "ci-bot"])
        #expect(parsed.account(for: .basic(username: "ada", password: "pässword")) == "ada")
        #expect(parsed.account(for: .basic(username: "ada", password: "second one")) == "ada")
        #expect(parsed.account(for: .bearer("abc123")) == "ci-bot")
        #expect(parsed.removing(account: "ada").accounts == ["ci-bot"])
    }

    @Test("wrong passwords, other accounts' passwords, tokens as passwords and unknown tokens are refused")
    func refusals() throws {
        let users = try UsersFile().adding(account: "ada", password: "secret", iterations: 1_000)
            .adding(account: "bob", password: "hunter2", iterations: 1_000)
            .addingToken(account: "bob", token: "t0k3n")
        #expect(users.account(for: .basic(username: "ada", password: "Secret")) == nil)
        #expect(users.account(for: .basic(username: "ada", password: "secret ")) == nil)
        #expect(users.account(for: .basic(username: "ada", password: "")) == nil)
        #expect(users.account(for: .basic(username: "ada", password: "hunter2")) == nil)
        #expect(users.account(for: .basic(username: "eve", password: "secret")) == nil)
        #expect(users.account(for: .basic(username: "bob", password: "t0k3n")) == nil)
        #expect(users.account(for: .bearer("t0k3n ")) == nil)
        #expect(users.account(for: .bearer("secret")) == nil)
    }

    @Test("a hand-written file with comments, blank lines, indentation and CRLF line ends parses")
    func handWritten() throws {
        let token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"  // SHA-256 of "test"
        let text = "# users\r\n\r\n  ci:token-sha256:\(token)  \r\n# end\r\n"
        let users = try UsersFile.parse(text)
        #expect(users.entries.count == 1)
        #expect(users.account(for: .bearer("test")) == "ci")
    }

    @Test(
        "a malformed line is reported with its number",
        arguments: [
            ("ada:token-sha256:zz", 3, "expected account:token-sha256:<64 hex digits>"),
            ("ada:token-sha256:abcd", 3, "expected account:token-sha256:<64 hex digits>"),
            ("ada:pbkdf2-sha256:1000:c2FsdA==", 3, "expected account:pbkdf2-sha256:<iterations>:<salt base64>:<key base64>"),
            ("ada:pbkdf2-sha256:many:c2FsdA==:a2V5", 3, "expected account:pbkdf2-sha256:<iterations>:<salt base64>:<key base64>"),
            ("ada:pbkdf2-sha256:0:c2FsdA==:a2V5", 3, "expected account:pbkdf2-sha256:<iterations>:<salt base64>:<key base64>"),
            ("ada:pbkdf2-sha256:1000:c2FsdA==:not base64!", 3, "expected account:pbkdf2-sha256:<iterations>:<salt base64>:<key base64>"),
            ("ada:md5:abc", 3, "unknown kind 'md5': use pbkdf2-sha256, token-sha256 or role"),
            ("a b:token-sha256:00", 3, "expected account:kind:…, with an account of letters, digits, '.', '-', '_', '@'"),
            ("just-a-name", 3, "expected account:kind:…, with an account of letters, digits, '.', '-', '_', '@'"),
        ])
    func malformedLine(line: String, number: Int, message: String) throws {
        let valid = try UsersFile().addingToken(account: "ok", token: "x").render()  // a comment line and one entry
        #expect(throws: UsersFileError(line: number, message)) {
            try UsersFile.parse(valid + line + "\n# after\n")
        }
    }

    @Test("the error's description names the line")
    func errorDescription() {
        #expect(UsersFileError(line: 7, "bad").description == "line 7: bad")
        #expect(UsersFileError(line: 0, "bad").description == "bad")
    }

    @Test("adding refuses an invalid account name or iteration count")
    func invalidAdditions() {
        #expect(throws: UsersFileError.self) { try UsersFile().adding(account: "a:b", password: "x", iterations: 1_000) }
        #expect(throws: UsersFileError.self) { try UsersFile().adding(account: "", password: "x", iterations: 1_000) }
        #expect(throws: UsersFileError.self) { try UsersFile().adding(account: "ada", password: "x", iterations: 0) }
        #expect(throws: UsersFileError.self) { try UsersFile().addingToken(account: "ada bob", token: "x") }
    }

    @Test("new passwords get at least 100 000 iterations and a fresh 16-byte salt each")
    func defaults() throws {
        #expect(UsersFile.defaultIterations >= 100_000)
        let users = try UsersFile().adding(account: "ada", password: "same", iterations: 1_000)
            .adding(account: "bob", password: "same", iterations: 1_000)
        let salts = users.entries.compactMap { entry -> [UInt8]? in
            guard case .password(_, _, let salt, _) = entry else { return nil }
            return salt
        }
        #expect(salts.count == 2)
        #expect(salts.allSatisfy { $0.count == 16 })
        #expect(salts[0] != salts[1])
    }

    @Test("write replaces the file atomically, readable by its owner only, and load reads it back")
    func writeAndLoad() throws {
        let url = Self.temporaryURL()
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("old contents\n".utf8).write(to: url)
        let users = try UsersFile().adding(account: "ada", password: "x", iterations: 1_000)
        try users.write(to: url)
        #expect(try UsersFile.load(from: url) == users)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
            .filter { $0.hasPrefix(".\(url.lastPathComponent)") }
        #expect(leftovers.isEmpty)
    }

    @Test("write into a missing folder fails and names the path")
    func writeFailure() throws {
        let url = Self.temporaryURL().appendingPathComponent("missing-folder/users.txt")
        let error = #expect(throws: UsersFileError.self) { try UsersFile().write(to: url) }
        #expect(error?.message.contains("missing-folder") == true)
    }
}
