import Foundation
import SyncCore
import SyncJSON
import SyncPush
import SyncTesting
import Testing

@Suite("Push server: listening to the store from the first registration on")
struct PushListeningTests {
    private func register(_ device: String, on push: PushServer) async throws -> SyncResponse {
        let body = Array(#"{"deviceToken": "\#(device)", "collections": ["notes"]}"#.utf8)
        return try await push.handle(
            SyncRequest(method: .post, path: "/push/register", contentType: "application/json", body: body),
            context: ServiceContext(account: "ada", mountPath: "/push"))
    }

    private func commitNote(_ id: RecordID, to store: MemoryStore) async throws {
        let record = SyncRecord(
            collection: "notes", id: id, fields: ["text": "x"], isDeleted: false,
            version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: "tests"))
        try await store.transaction(for: "ada") { tx in try await tx.put(record) }
    }

    @Test("no device registered: the server does not listen; the first registration is answered once it listens, and hears the next commit")
    func listensFromTheFirstRegistration() async throws {
        let store = MemoryStore()
        let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]))
        let running = Task { try await push.run() }
        defer { running.cancel() }
        await push.waitUntilListening()
        try await commitNote("before", to: store)
        #expect(!push.isListening, "listening with no device registered")

        let answer = try await register("phone", on: push)
        #expect(answer.status == 200)
        #expect(push.isListening, "the registration was answered before the server listened")
        try await commitNote("after", to: store)
        // The commit reaches the device's queue once the listener announced it.
        var queued = 0
        for _ in 0..<1_000 where queued == 0 {
            queued = await push.deviceStatuses(of: "ada").first?.queued ?? 0
            if queued == 0 { await Task.yield() }
        }
        #expect(queued == 1, "the commit after the registration's answer was not announced")
        #expect(try await register("tablet", on: push).status == 200)
    }

    @Test("a registration before the server runs is answered at once, and the server listens from its start")
    func registrationBeforeRun() async throws {
        let store = MemoryStore()
        let push = PushServer(store: store, codecs: CodecSet([JSONCodec()]))
        #expect(try await register("phone", on: push).status == 200)
        let running = Task { try await push.run() }
        defer { running.cancel() }
        await push.waitUntilListening()
        #expect(push.isListening)
    }

    @Test("a server stopped while waiting for the first registration answers registrations at once")
    func stoppedWhileWaiting() async throws {
        let push = PushServer(store: MemoryStore(), codecs: CodecSet([JSONCodec()]))
        let running = Task { try await push.run() }
        await push.waitUntilListening()
        running.cancel()
        _ = try? await running.value
        #expect(try await register("phone", on: push).status == 200)
        #expect(!push.isListening)
    }
}
