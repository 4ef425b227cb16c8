import Foundation
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncTesting
import Testing

@Suite("Failed logins are limited per account and per address")
struct LoginThrottleTests {
    static let users: UsersFile = {
        do {
            return try UsersFile().adding(account: "ada", password: "right", iterations: 1_000)
                .adding(account: "carol", password: "carols", iterations: 1_000)
        } catch {
            fatalError("test users: \(error)")
        }
    }()

    @Test("20 wrong passwords in a row get 429 with Retry-After; the right one works after the wait; others are unaffected")
    func twentyWrongPasswords() async throws {
        let clock = TestClock()
        try await HTTPSyncServer.withRunningServer(
            service: EchoService(), authenticator: UsersFileAuthenticator(users: Self.users), sleeper: clock
        ) { baseURL in
            let transport = HTTPClientTransport(baseURL: baseURL)
            func send(_ username: String, _ password: String) async throws -> SyncResponse {
                try await transport.send(
                    SyncRequest(method: .get, path: "/", credentials: .basic(username: username, password: password)))
            }
            var statuses: [Int] = []
            var retryAfters: [Duration?] = []
            for _ in 0..<20 {
                let response = try await send("ada", "wrong")
                statuses.append(response.status)
                retryAfters.append(response.retryAfter)
            }
            #expect(statuses == Array(repeating: 401, count: 10) + Array(repeating: 429, count: 10))
            #expect(retryAfters.suffix(10).allSatisfy { $0 == .seconds(60) }, "\(retryAfters)")

            let locked = try await send("ada", "right")
            #expect(locked.status == 429, "the right password is not even checked while locked")
            #expect(String(decoding: locked.body, as: UTF8.self).contains("too_many_requests"))
            #expect(try await send("carol", "carols").status == 200, "another account is unaffected")
            #expect(try await send("carol", "nope").status == 401, "and its own failures are its own")

            clock.advance(by: .seconds(59))
            #expect(try await send("ada", "right").status == 429, "the wait is not over")
            clock.advance(by: .seconds(1))
            #expect(try await send("ada", "right").status == 200, "the right password works after the wait")
            #expect(try await send("ada", "wrong").status == 401, "a success forgets the failures")
        }
    }

    @Test("each lock after the first doubles, up to the cap; a quiet window after the last lock forgets the account")
    func backoffGrowsAndIsCapped() {
        let clock = TestClock()
        let throttle = LoginThrottle(policy: .standard, sleeper: clock)
        for _ in 0..<10 { throttle.recordFailure(user: "ada", address: nil) }
        var locks: [Duration?] = []
        for _ in 0..<6 {
            let lock = throttle.lockout(user: "ada", address: nil)
            locks.append(lock)
            clock.advance(by: lock ?? .zero)
            #expect(throttle.lockout(user: "ada", address: nil) == nil, "the lock ends when it says")
            throttle.recordFailure(user: "ada", address: nil)
        }
        #expect(locks == [.seconds(60), .seconds(120), .seconds(240), .seconds(480), .seconds(900), .seconds(900)])

        clock.advance(by: .seconds(15 * 60))
        #expect(throttle.lockout(user: "ada", address: nil) == nil, "the last lock has passed")
        clock.advance(by: .seconds(15 * 60))  // and a window without failures after it
        throttle.recordFailure(user: "ada", address: nil)
        #expect(throttle.lockout(user: "ada", address: nil) == nil, "after a quiet window one failure does not lock")
    }

    @Test("one address is locked after 30 failures over many accounts; other addresses and a success do not reset it")
    func perAddress() {
        let clock = TestClock()
        let throttle = LoginThrottle(policy: .standard, sleeper: clock)
        for index in 0..<30 { throttle.recordFailure(user: "user\(index)", address: "10.0.0.7") }
        #expect(throttle.lockout(user: "someone", address: "10.0.0.7") == .seconds(60))
        #expect(throttle.lockout(user: "someone", address: "10.0.0.8") == nil)
        throttle.recordSuccess(user: "ada")
        #expect(throttle.lockout(user: nil, address: "10.0.0.7") == .seconds(60))
        #expect(throttle.lockout(user: "user0", address: "10.0.0.8") == nil, "one failure for user0 does not lock it")
    }
}
