import SyncCore
import Testing

@testable import SyncPush

@Suite("Push messages")
struct PushMessageTests {
    @Test func notificationsRoundTripThroughTheirJSON() throws {
        for notification in [
            PushNotification(seq: 1, token: "ab12", retained: false), PushNotification(seq: 1_700_000_000_123, token: nil, retained: true),
        ] {
            #expect(try PushNotification(json: notification.json) == notification)
        }
        #expect(PushNotification(seq: 7, token: nil, retained: true).json == #"{"retained":true,"seq":7,"token":null}"#)
        #expect(throws: PushError.self) { try PushNotification(json: #"{"seq":"x"}"#) }
    }

    @Test("PushError codes are matched by name in a catch and a switch; each code has its class")
    func errorCodesMatchByName() throws {
        let thrown = #expect(throws: PushError.self) { try PushNotification(json: #"{"seq":"x"}"#) }
        let thrownKind = thrown.map { Self.kind($0) }
        #expect(thrownKind == "reconnect")
        let garbled = PushError(.invalidMessage, "garbled")
        #expect(Self.kind(SyncClientError(.invalidResponse, "not push")) == "other")
        #expect(Self.kind(garbled) == "reconnect")
        #expect(Self.kind(PushError(.invalidServer, "http:// is no address")) == "stop")
        #expect(Self.kind(PushError(.alreadyRunning, "runs")) == "stop")
        #expect(Self.kind(CancellationError()) == "other")
        #expect(garbled.failureClass == .retryLater)
        #expect(PushError(.invalidServer, "no address").failureClass == .refused)
        #expect(garbled.code.description == "invalid message" && garbled.description == "garbled")
    }

    /// What a caller does on `error`, matched by code.
    private static func kind(_ error: any Error) -> String {
        switch error {
        case PushError.invalidMessage: "reconnect"
        case PushError.invalidServer, PushError.alreadyRunning: "stop"
        default: "other"
        }
    }
}
