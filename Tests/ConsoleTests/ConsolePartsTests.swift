import Foundation
import SyncCore
import SyncHTTPServer
import Synchronization
import Testing

@testable import SyncConsole

/// The console's parts on their own: the load history, how values read as text, which device a
/// request comes from, and operators in the users file.
@Suite("console parts")
struct ConsolePartsTests {
    /// A wall clock the test moves by hand.
    final class Hands: Sendable {
        private let seconds = Mutex(1_800_000_000.25)
        var now: Date { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
    }

    @Test("the load history counts each second's requests, syncs and errors; the syncs' percentiles are within 10 %")
    func loadHistoryCountsSeconds() {
        let hands = Hands()
        let history = LoadHistory(capacity: 5, now: { hands.now })
        for millisecond in 1...100 {
            history.record(stack: "aquasync", status: 200, duration: .milliseconds(millisecond))
        }
        history.record(stack: "other", status: 503, duration: .milliseconds(1))
        history.note(gauge: 7)
        hands.advance(2)
        history.record(stack: "ota", status: 200, duration: .microseconds(500))

        let samples = history.samples()
        #expect(samples.count == 5)
        #expect(samples.map(\.requests) == [0, 0, 101, 0, 1])
        #expect(samples.map(\.syncs) == [0, 0, 100, 0, 1])
        #expect(samples.map(\.errors) == [0, 0, 1, 0, 0])
        #expect(samples.map(\.gauge) == [nil, nil, 7, nil, nil])
        #expect(samples[4].time.timeIntervalSince1970 == 1_800_000_002)
        let busy = samples[2]
        #expect(busy.p50.map { (50...55).contains($0) } == true, "p50 \(String(describing: busy.p50))")
        #expect(busy.p99.map { (99...109).contains($0) } == true, "p99 \(String(describing: busy.p99))")
        #expect(samples[3].p50 == nil)
        #expect(samples[4].p99.map { (0.5...0.55).contains($0) } == true)

        // Five seconds later the busy second has left the history.
        hands.advance(5)
        #expect(history.samples().map(\.requests) == [0, 0, 0, 0, 0])
    }

    @Test("a field reads as text: strings as they are, markup included; data, dates and nested values spelled out")
    func fieldsReadAsText() {
        #expect(FieldText.text(of: .string("<img src=x onerror=alert(1)>")) == "<img src=x onerror=alert(1)>")
        #expect(FieldText.text(of: .integer(-42)) == "-42")
        #expect(FieldText.text(of: .bool(true)) == "true")
        #expect(FieldText.text(of: .date(Date(timeIntervalSince1970: 0))) == "1970-01-01T00:00:00Z")
        #expect(FieldText.text(of: .data([0xde, 0xad, 0xbe, 0xef])) == "4 bytes: deadbeef")
        #expect(
            FieldText.text(of: .dictionary(["b": .array([.string("x\"y"), .null]), "a": .real(1.5)]))
                == #"{"a": 1.5, "b": ["x\"y", null]}"#)
        #expect(FieldText.typeName(of: .unsignedInteger(1)) == "integer")
        #expect(FieldText.typeName(of: .real(1)) == "double")
        let long = FieldText.text(of: .string(String(repeating: "é", count: 20_000)))
        #expect(long.count == FieldText.maxCharacters + 1 && long.hasSuffix("…"))
    }

    @Test("a device is known by X-Device-Token, else Aquasync's deviceToken, else its user agent")
    func devicesAreNamed() {
        #expect(DeviceActivity.deviceName(of: SyncRequest(method: .get, path: "/deltas/from:0?deviceToken=q", device: "phone")) == "phone")
        #expect(DeviceActivity.deviceName(of: SyncRequest(method: .get, path: "/deltas/from:0?deviceToken=q%2F1")) == "q/1")
        #expect(DeviceActivity.deviceName(of: SyncRequest(method: .post, path: "/ota", userAgent: "Phone/2")) == "unnamed (Phone/2)")
    }

    @Test("the activity counts a stack's requests per device, bytes both ways, and not the console's own")
    func activityCountsStackRequests() async throws {
        let activity = DeviceActivity(codecs: CodecSet([NamedTestCodec()]), now: { Date(timeIntervalSince1970: 5) })
        let service = EchoService().with(activity.middleware)
        let context = ServiceContext(account: "ada")
        _ = try await service.handle(
            SyncRequest(method: .post, path: "/deltas", contentType: "application/x-test", device: "phone", body: [1, 2, 3]),
            context: context)
        _ = try await service.handle(SyncRequest(method: .get, path: "/console/api/accounts"), context: context)
        let devices = activity.devices(of: "ada")
        #expect(devices.count == 1)
        #expect(devices.first?.device == "phone")
        #expect(devices.first?.stack == "Aquasync")
        #expect(devices.first?.codec == "test")
        #expect(devices.first?.bytesIn == 3 && devices.first?.bytesOut == 5)
        #expect(devices.first?.lastStatus == 200)
        #expect(activity.devices(of: "grace").isEmpty)
    }

    @Test("operators: a role line in the users file, granted once, withdrawn, and never a way to sign in")
    func operatorsInTheUsersFile() throws {
        let users = try UsersFile().adding(account: "op", password: "pw", iterations: 1_000).granting(.operator, to: "op")
            .granting(.operator, to: "op").adding(account: "ada", password: "pw", iterations: 1_000)
        #expect(users.entries.count == 3)
        #expect(users.has(.operator, "op") && !users.has(.operator, "ada"))
        let reread = try UsersFile.parse(users.render())
        #expect(reread == users)
        #expect(users.render().contains("op:role:operator\n"))
        #expect(!users.withdrawing(.operator, from: "op").has(.operator, "op"))
        #expect(throws: UsersFileError.self) { try UsersFile.parse("op:role:admin\n") }
        // A role alone proves nothing: nobody can sign in with it.
        let roleOnly = UsersFileAuthenticator(users: try UsersFile().granting(.operator, to: "op"))
        #expect(!roleOnly.hasAccounts)
        #expect(UsersFile(entries: [.role(account: "op", role: .operator)]).account(for: .basic(username: "op", password: "")) == nil)
    }
}

/// Answers every request 200 with five bytes of `application/x-test`.
private struct EchoService: SyncService {
    func handle(_ request: SyncRequest, context: ServiceContext) async throws -> SyncResponse {
        SyncResponse(status: 200, contentType: "application/x-test", body: [1, 2, 3, 4, 5])
    }
}

/// A codec named `test` for `application/x-test`; the activity only asks it for its media type.
private struct NamedTestCodec: SyncCodec {
    var id: CodecID { "test" }
    var mediaTypes: [String] { ["application/x-test"] }
    var limits: CodecLimits { .default }
    var features: CodecFeatures { [] }
    func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] { [] }
    func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue { .null }
}
