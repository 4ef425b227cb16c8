import Aquasync
import FoundationEssentials
import SyncCore
import SyncHTTP
import SyncTesting
import TestSupport
import Testing

@Suite("Aquasync over real HTTP on a loopback port")
struct AquasyncHTTPTests {
    /// Runs `body` with a server for `harness` on a free loopback port and a transport to it as `ada`.
    static func withServer<R: Sendable>(
        _ harness: AquasyncHarness, _ body: (any SyncClientTransport) async throws -> R
    ) async throws -> R {
        try await HTTPSyncServer.withRunningServer(
            service: harness.service, authenticator: StaticAuthenticator(passwords: ["ada": "secret"])
        ) { baseURL in
            try await body(
                HTTPClientTransport(baseURL: baseURL).with(CredentialsMiddleware(.basic(username: "ada", password: "secret"))))
        }
    }

    @Test("create, update, soft delete and a conflict travel between devices", arguments: TestCodec.allCases)
    func devicesConverge(codec: TestCodec) async throws {
        let harness = AquasyncHarness()
        try await Self.withServer(harness) { transport in
            let phoneClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let laptopClock = TestClock(wallTime: .milliseconds(1_700_000_000_000))
            let phone = harness.client(codec, clock: phoneClock, through: transport)
            let laptop = harness.client(codec, clock: laptopClock, through: transport)

            let ada = try await phone.save("Contact", fields: ["name": "Ada", "photo": .data([0, 1, 2, 255])])
            let alan = try await laptop.save("Contact", fields: ["name": "Alan", "score": 1.5])
            try await phone.sync()
            try await laptop.sync()
            try await phone.sync()
            #expect(try await phone.objects("Contact").count == 2)
            // JSON carries data as base64 text; the other codecs as data.
            let photo: SyncValue = codec == .json ? "AAEC/w==" : .data([0, 1, 2, 255])
            #expect(try await laptop.object("Contact", gid: ada)?.fields["photo"] == photo)

            phoneClock.wallTime = .milliseconds(1_700_000_010_000)
            laptopClock.wallTime = .milliseconds(1_700_000_020_000)
            try await phone.save("Contact", gid: ada, fields: ["name": "Ada (phone)"])
            try await laptop.save("Contact", gid: ada, fields: ["name": "Ada (laptop)"])
            try await laptop.delete("Contact", gid: alan)
            try await phone.sync()
            try await laptop.sync()
            try await phone.sync()
            for device in [phone, laptop] {
                #expect(try await device.object("Contact", gid: ada)?.fields["name"] == "Ada (laptop)")
                #expect(try await device.object("Contact", gid: alan)?.isDeleted == true)
            }
        }
    }

    @Test("without credentials the server answers 401 and the device reports it")
    func unauthorized() async throws {
        let harness = AquasyncHarness()
        try await HTTPSyncServer.withRunningServer(
            service: harness.service, authenticator: StaticAuthenticator(passwords: ["ada": "secret"])
        ) { baseURL in
            let device = harness.client(.json, through: HTTPClientTransport(baseURL: baseURL))
            try await device.save("Contact", fields: ["name": "Ada"])
            let error = await #expect(throws: AquasyncClientError.self) { try await device.sync() }
            #expect(error?.status == 401)
        }
    }
}
