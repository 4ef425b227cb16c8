import Foundation
import NotesStack
import SyncCore
import SyncJSON
import Testing

@Suite("The notes server answers bad requests with the right status and keeps serving")
struct NotesServerTests {
    let harness = NotesHarness()

    func send(_ request: SyncRequest) async throws -> SyncResponse {
        try await harness.loopback().send(request)
    }

    @Test func badRequests() async throws {
        let json = "application/json"
        #expect(try await send(SyncRequest(method: .get, path: "/notes/changes?after=soon")).status == 400)
        #expect(try await send(SyncRequest(method: .get, path: "/notes/push")).status == 405)
        #expect(try await send(SyncRequest(method: .get, path: "/notes/everything")).status == 404)
        #expect(try await send(SyncRequest(method: .post, path: "/notes/push", contentType: "text/csv")).status == 415)
        let notJSON = SyncRequest(method: .post, path: "/notes/push", contentType: json, body: Array("{".utf8))
        #expect(try await send(notJSON).status == 400)
        let notAPush = SyncRequest(method: .post, path: "/notes/push", contentType: json, body: Array(#"{"changes":3}"#.utf8))
        let answer = try await send(notAPush)
        #expect(answer.status == 400)
        #expect(try JSONCodec().decode(answer.body)["message"]?.stringValue?.contains("PushRequest") == true)
        #expect(try await send(SyncRequest(method: .get, path: "/notes/changes?after=0")).status == 200)
    }

    @Test func wrongPasswordIsUnauthorized() async throws {
        let phone = harness.device("phone", harness.loopback(as: .basic(username: "ada", password: "wrong")))
        try await phone.save(title: "Secret", text: "")
        let error = await #expect(throws: SyncClientError.self) { try await phone.sync() }
        #expect(error?.code == .unauthorized)
        #expect(try await phone.notes().count == 1)  // kept, to go up once the password is right
    }
}

@Suite("NotesMergePolicy keeps every word and answers the same whichever side asks")
struct NotesMergePolicyTests {
    static let at = Date(timeIntervalSince1970: 1_700_000_000)

    static func note(_ text: String, by node: PeerID, at seconds: Double, deleted: Bool = false) -> SyncRecord {
        SyncRecord(
            collection: "notes", id: "n1", fields: deleted ? [:] : ["title": .string("by \(node)"), "text": .string(text)],
            isDeleted: deleted, version: RecordVersion(modifiedAt: at.addingTimeInterval(seconds), node: node))
    }

    /// The record each side ends with after resolving the conflict between `a` and `b`.
    static func outcomes(_ a: SyncRecord, _ b: SyncRecord) async -> (SyncRecord, SyncRecord) {
        func outcome(local: SyncRecord, remote: SyncRecord, side: SyncSide) async -> SyncRecord {
            switch await NotesMergePolicy().resolve(Conflict(local: local, remote: remote, resolvingSide: side)) {
            case .keepLocal, .keepBoth, .deferred: local
            case .takeRemote: remote
            case .merged(let merged): merged
            }
        }
        return (await outcome(local: a, remote: b, side: .server), await outcome(local: b, remote: a, side: .client))
    }

    @Test func differentTextsAreBothKeptUnderTheNewerTitle() async {
        let (onServer, onClient) = await Self.outcomes(
            Self.note("eggs", by: "phone", at: 1), Self.note("bread", by: "laptop", at: 2))
        #expect(onServer == onClient)
        #expect(onServer.fields["text"] == "eggs\n\nbread")
        #expect(onServer.fields["title"] == "by laptop")
    }

    @Test func aTextHoldingTheOtherWins() async {
        let (onServer, onClient) = await Self.outcomes(
            Self.note("eggs\n\nbread", by: "phone", at: 1), Self.note("bread", by: "laptop", at: 2))
        #expect(onServer == onClient)
        #expect(onServer.fields["text"] == "eggs\n\nbread")
    }

    @Test func anEditWinsOverADeletion() async {
        let (onServer, onClient) = await Self.outcomes(
            Self.note("", by: "phone", at: 2, deleted: true), Self.note("bread", by: "laptop", at: 1))
        #expect(onServer == onClient)
        #expect(!onServer.isDeleted && onServer.fields["text"] == "bread")
    }
}
