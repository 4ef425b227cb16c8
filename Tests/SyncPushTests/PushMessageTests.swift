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
}
