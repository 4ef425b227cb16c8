import Foundation
import SyncCore
import SyncHTTPServer
import SyncTesting
import TestSupport
import Testing

@Suite("UsersFileAuthenticator")
struct UsersFileAuthenticatorTests {
    @Test("passwords and tokens prove their accounts; anything else proves none")
    func authenticate() async throws {
        let authenticator = TransportRoute.defaultAuthenticator
        #expect(try await authenticator.authenticate(TransportRoute.ada) == "ada")
        #expect(try await authenticator.authenticate(TransportRoute.bob) == "bob")
        #expect(try await authenticator.authenticate(nil) == nil)
        #expect(try await authenticator.authenticate(.basic(username: "ada", password: "wrong")) == nil)
        #expect(try await authenticator.authenticate(.basic(username: "nobody", password: "secret")) == nil)
    }

    @Test("a remembered password does not let a different password through")
    func rememberedPassword() async throws {
        let authenticator = TransportRoute.defaultAuthenticator
        #expect(try await authenticator.authenticate(TransportRoute.ada) == "ada")
        #expect(try await authenticator.authenticate(TransportRoute.ada) == "ada")
        #expect(try await authenticator.authenticate(.basic(username: "ada", password: "secreT")) == nil)
    }

    @Test("reload() reads the changed file: a removed account is refused even after it was remembered")
    func reload() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-users-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let users = try UsersFile().adding(account: "ada", password: "pw", iterations: 1_000)
        try users.write(to: url)
        let authenticator = try UsersFileAuthenticator(contentsOf: url)
        #expect(try await authenticator.authenticate(.basic(username: "ada", password: "pw")) == "ada")

        try users.removing(account: "ada").addingToken(account: "bob", token: "t").write(to: url)
        try authenticator.reload()
        #expect(try await authenticator.authenticate(.basic(username: "ada", password: "pw")) == nil)
        #expect(try await authenticator.authenticate(.bearer("t")) == "bob")
    }

    @Test("reload() keeps the old users when the file has become malformed")
    func reloadMalformed() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-users-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        try UsersFile().addingToken(account: "bob", token: "t").write(to: url)
        let authenticator = try UsersFileAuthenticator(contentsOf: url)
        try Data("bob:nonsense\n".utf8).write(to: url)
        #expect(throws: UsersFileError(line: 1, "expected account:kind:…, with an account of letters, digits, '.', '-', '_', '@'")) {
            try authenticator.reload()
        }
        #expect(try await authenticator.authenticate(.bearer("t")) == "bob")
    }
}
