import SyncCore
import SyncTesting
import Testing

@Suite("The one client error: codes matched by name, refusals")
struct SyncClientErrorTests {
    /// Throws `error`, so that a `catch` pattern meets it as `any Error`.
    private func rethrow(_ error: any Error) throws { throw error }

    @Test("catch SyncClientError.<code> catches exactly the errors with that code, from an endpoint's answer")
    func catchByCode() async throws {
        let service = ScriptedServer([SyncResponse(status: 401, contentType: "text/plain", body: Array("who are you".utf8))], clock: TestClock())
        let endpoint = service.endpoint(retry: .none)
        var matched = ""
        do {
            _ = try await endpoint.send(endpoint.request(.get, "/items"))
        } catch SyncClientError.rateLimited {
            matched = "rateLimited"
        } catch SyncClientError.unauthorized {
            matched = "unauthorized"
        }
        #expect(matched == "unauthorized")

        // The code's own member matches too, and neither matches another error type or code.
        let unauthorized = SyncClientError(.unauthorized, status: 401, "GET /items: server answered 401")
        #expect(SyncClientError.Code.unauthorized ~= unauthorized)
        #expect(SyncClientError.unauthorized ~= unauthorized)
        #expect(!(SyncClientError.rejected ~= unauthorized))
        #expect(!(SyncClientError.unauthorized ~= StoreError(.unavailable, "down")))
        #expect(!(SyncClientError.unauthorized ~= CancellationError()))

        // In a switch over any error.
        func kind(_ error: any Error) -> String {
            switch error {
            case SyncClientError.unauthorized: "ask for the password"
            case SyncClientError.refused: "tell the user"
            case SyncClientError.connectionFailed, SyncClientError.serverFailed: "later"
            default: "other"
            }
        }
        #expect(kind(unauthorized) == "ask for the password")
        #expect(kind(SyncClientError(.connectionFailed, "GET /x: refused")) == "later")
        #expect(kind(StoreError(.unavailable, "down")) == "other")
    }

    @Test("a refusal carries the stack, the protocol's status and its reason; its class does not read a protocol status as HTTP's")
    func refusals() throws {
        let ota = SyncClientError.refusal(
            stack: "ota", status: 604, reason: "dataclass com.apple.Notes is switched off",
            "com.apple.Notes: E_NotAllowed (604) [uri]: dataclass com.apple.Notes is switched off")
        #expect(ota.code == .refused && ota.stack == "ota" && ota.status == 604)
        #expect(ota.reason == "dataclass com.apple.Notes is switched off")
        #expect(ota.description == "refused: com.apple.Notes: E_NotAllowed (604) [uri]: dataclass com.apple.Notes is switched off")
        #expect(SyncFailureClass(of: ota) == .refused)
        do {
            try rethrow(ota)
            Issue.record("not thrown")
        } catch SyncClientError.refused {
        }

        let appSync = SyncClientError.refusal(stack: "appsync", status: 409, reason: "object a1 already has this\nprimary key")
        #expect(appSync.message == "object a1 already has this primary key" && appSync.reason == appSync.message, "one line")
        #expect(SyncFailureClass(of: appSync) == .conflict, "appSync's statuses are HTTP's: 409 is a conflict")
        #expect(SyncFailureClass(of: SyncClientError.refusal(stack: "appsync", status: 422, reason: "too big")) == .refused)
        #expect(SyncFailureClass(of: SyncClientError.refusal(stack: "mine", status: nil, reason: "no")) == .refused)

        // A protocol's status that says the server cannot serve now keeps its code's class.
        let busy = SyncClientError(.serverFailed, status: 700, "E_ServiceBusy (700)", stack: "ota", reason: "E_ServiceBusy")
        #expect(SyncFailureClass(of: busy) == .retryLater)
        // An HTTP answer outside 2xx is no protocol refusal: no stack, no reason.
        let rejected = SyncClientError(.rejected, status: 404, "GET /x: server answered 404")
        #expect(rejected.stack == nil && rejected.reason == nil)
    }
}
