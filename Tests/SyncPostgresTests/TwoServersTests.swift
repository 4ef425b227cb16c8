import Aquasync
import Foundation
import PostgresNIO
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncMessagePack
import SyncTesting
import Synchronization
import Testing
import TestSupport

/// The `anchorage` executable, built beside the test bundle.
private let anchorageExecutable = ChildProcess.builtExecutable(named: "anchorage")

@Suite(
    "two anchorage serve processes on one PostgreSQL database",
    .enabled("no PostgreSQL server (see the reason printed above)") { await TestPostgresServer.isAvailable },
    .enabled(if: anchorageExecutable != nil, "the anchorage executable was not found beside the test bundle"))
struct TwoServersTests {
    @Test("Aquasync devices whose requests alternate between the two servers converge with nothing lost")
    func devicesAlternatingBetweenServersConverge() async throws {
        let executable = try #require(anchorageExecutable)
        let address = try #require(await TestPostgresServer.address)
        let database = "two_servers_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await administer("CREATE DATABASE \(database)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("two-servers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let users = folder.appendingPathComponent("users.txt").path
        let token = "two-servers-\(UUID().uuidString)"
        let added = try await ChildProcess.run(executable, arguments: ["users", "add", "ada", "--file", users, "--token", token])
        try #require(added.status == 0, "anchorage users add failed: \(added.errorText)")

        let storeURL = "postgres://\(address.username)@\(address.host):\(address.port)/\(database)"
        let servers = try (0..<2).map { _ in
            try ChildProcess.start(
                executable, arguments: ["serve", "--port", "0", "--store", storeURL, "--users", users, "--log-level", "warning"])
        }
        do {
            var urls: [URL] = []
            for server in servers {
                urls.append(
                    try await server.waitForOutputLine { line in
                        line.split(separator: " ").first { $0.hasPrefix("http://") }.flatMap { URL(string: String($0)) }
                    })
            }
            try await converge(through: urls, token: token)
        } catch {
            for server in servers { _ = try? await server.terminate() }
            try? await administer("DROP DATABASE IF EXISTS \(database)")
            throw error
        }
        for server in servers {
            let status = try await server.terminate()
            #expect(status == 0, "a server stopped with status \(status): \(String(decoding: server.standardError, as: UTF8.self))")
        }
        try await administer("DROP DATABASE IF EXISTS \(database)")
    }

    /// Three devices make random edits, each sync's requests alternating
    /// between the servers at `urls`; then every device holds every record's
    /// winning version.
    private func converge(through urls: [URL], token: String) async throws {
        let alternating = AlternatingTransport(
            urls.map { HTTPClientTransport(baseURL: $0).with(CredentialsMiddleware(.bearer(token))) })
        let codecs: [any SyncCodec] = [JSONCodec(), MessagePackCodec(), JSONCodec()]
        let devices = codecs.map { codec in
            AquasyncClient(
                store: MemoryStore(), transport: alternating, codec: codec, configuration: .init(retry: .none, packSize: 7))
        }
        var random = SystemRandomNumberGenerator()
        var gids: [String] = []
        for round in 0..<60 {
            let device = devices[Int.random(in: 0..<3, using: &random)]
            if round % 5 == 4, let gid = gids.randomElement(using: &random) {
                try await device.save("Note", gid: gid, fields: ["text": .string("edit \(round)")])
            } else {
                gids.append(try await device.save("Note", fields: ["text": .string("note \(round)"), "round": .integer(Int64(round))]))
            }
            _ = try await devices[Int.random(in: 0..<3, using: &random)].sync()
        }
        for _ in 0..<2 { for device in devices { _ = try await device.sync() } }

        #expect(alternating.requestsPerTransport.allSatisfy { $0 > 10 }, "both servers answered")
        let reference = try await Self.contents(of: devices[0])
        #expect(Set(reference.keys) == Set(gids), "every record reached the first device")
        for device in devices.dropFirst() {
            #expect(try await Self.contents(of: device) == reference)
        }
    }

    /// Each record's fields and time stamp, by gid; every record must be clean.
    private static func contents(of device: AquasyncClient) async throws -> [String: [String: SyncValue]] {
        var contents: [String: [String: SyncValue]] = [:]
        for object in try await device.objects("Note") {
            #expect(!object.isDirty)
            var fields = object.fields
            fields["localTimestamp"] = .integer(object.localTimestamp)
            contents[object.gid] = fields
        }
        return contents
    }

    /// Runs `sql` on the test server's maintenance database.
    private func administer(_ sql: String) async throws {
        try await withTestDatabase(maximumConnections: 1) { database in
            _ = try await database.client.query(PostgresQuery(unsafeSQL: sql))
        }
    }
}

/// Sends each request to the next of several transports in turn.
private final class AlternatingTransport: SyncClientTransport {
    private let transports: [any SyncClientTransport]
    private let counts: Mutex<[Int]>

    init(_ transports: [any SyncClientTransport]) {
        self.transports = transports
        counts = Mutex(Array(repeating: 0, count: transports.count))
    }

    /// How many requests each transport carried.
    var requestsPerTransport: [Int] { counts.withLock { $0 } }

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        let index = counts.withLock { counts in
            let index = counts.reduce(0, +) % counts.count
            counts[index] += 1
            return index
        }
        return try await transports[index].send(request)
    }
}
