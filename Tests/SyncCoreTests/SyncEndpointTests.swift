import SyncCore
import SyncTesting
import Testing

@Suite("The client engine: sending, retrying, errors, decoding")
struct SyncEndpointTests {
    let clock = TestClock()
    /// One second before the first retry, doubling; jitter takes off up to half.
    let retry = RetryPolicy(maxAttempts: 5, initialDelay: .seconds(1), multiplier: 2, maxDelay: .seconds(30), jitter: 0.5)

    @Test("503 twice, then 200: the client waits on the clock between attempts and gets the answer")
    func serviceUnavailableTwiceThenSuccess() async throws {
        let service = ScriptedServer([.text("busy", status: 503), .text("busy", status: 503)], clock: clock)
        let endpoint = service.endpoint(retry: retry)
        let answer = Task { try await endpoint.send(endpoint.request(.get, "/items"), as: Greeting.self) }

        await clock.waitForSleepers(1)
        #expect(service.requests.count == 1)
        clock.advance(by: .milliseconds(499))           // jitter takes off at most half of the 1 s
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(501))
        await clock.waitForSleepers(1)
        #expect(service.requests.count == 2)
        clock.advance(by: .milliseconds(999))           // the second wait is 1 to 2 s
        #expect(clock.sleeperCount == 1)
        clock.advance(by: .milliseconds(1_001))

        #expect(try await answer.value == Greeting(count: 3, note: "ok"))
        #expect(service.arrivals == [.zero, .seconds(1), .seconds(3)])
    }

    @Test("429 with Retry-After: 2 waits exactly 2 s, whatever the backoff says")
    func tooManyRequestsHonoursRetryAfter() async throws {
        let service = ScriptedServer(
            [SyncResponse(status: 429, contentType: "text/plain", retryAfter: .seconds(2), body: Array("slow down".utf8))],
            clock: clock)
        let endpoint = service.endpoint(retry: retry)
        let answer = Task { try await endpoint.send(endpoint.request(.post, "/items"), as: Greeting.self) }

        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(1_999))
        #expect(clock.sleeperCount == 1)
        #expect(service.requests.count == 1)
        clock.advance(by: .milliseconds(1))

        #expect(try await answer.value.count == 2)
        #expect(service.arrivals == [.zero, .seconds(2)])
    }

    @Test("a Retry-After longer than the policy allows is not waited for")
    func retryAfterBeyondTheLimitFailsAtOnce() async throws {
        let service = ScriptedServer([SyncResponse(status: 429, retryAfter: .seconds(3_600))], clock: clock)
        let endpoint = service.endpoint(retry: retry)
        let error = await #expect(throws: SyncClientError.self) {
            try await endpoint.send(endpoint.request(.get, "/items"))
        }
        #expect(error?.code == .rateLimited)
        #expect(error?.status == 429)
        #expect(service.requests.count == 1)
    }

    @Test("400 is not retried: one request, no wait, a rejected error with the status and the server's words")
    func badRequestIsNotRetried() async throws {
        let service = ScriptedServer([.text("no such field\nat line 2", status: 400)], clock: clock)
        let endpoint = service.endpoint(retry: retry)
        let error = await #expect(throws: SyncClientError.self) {
            try await endpoint.send(endpoint.request(.get, "/items?token=secret"))
        }
        #expect(error?.code == .rejected)
        #expect(error?.status == 400)
        #expect(error?.message == "GET /items: server answered 400: no such field at line 2")
        #expect(service.requests.count == 1)
        #expect(clock.sleeperCount == 0)
    }

    @Test("500 is retried for an idempotent request and not for a POST, unless the POST is declared idempotent")
    func internalErrorRetriedOnlyWhenIdempotent() async throws {
        let post = ScriptedServer([.text("boom", status: 500)], clock: clock)
        let postEndpoint = post.endpoint(retry: retry)
        let error = await #expect(throws: SyncClientError.self) {
            try await postEndpoint.send(postEndpoint.request(.post, "/items"))
        }
        #expect(error?.code == .serverFailed)
        #expect(error?.status == 500)
        #expect(post.requests.count == 1)

        for (method, idempotent) in [(SyncRequest.Method.put, nil), (.get, nil), (.post, true)] as [(SyncRequest.Method, Bool?)] {
            let service = ScriptedServer([.text("boom", status: 500)], clock: clock)
            let endpoint = service.endpoint(retry: retry)
            let answer = Task {
                try await endpoint.send(endpoint.request(method, "/items"), idempotent: idempotent, as: Greeting.self)
            }
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(1))
            #expect(try await answer.value.count == 2, "\(method)")
        }
    }

    @Test("a dropped request and a lost answer are retried; the server saw what reached it")
    func connectionErrorsAreRetried() async throws {
        let service = ScriptedServer([], clock: clock)
        let faults = FaultInjectingMiddleware(plan: .scripted([.drop, .cutAfterProcessing]), sleeper: clock)
        let endpoint = service.endpoint(retry: retry, middleware: faults)
        let answer = Task { try await endpoint.send(endpoint.request(.put, "/items/1"), as: Greeting.self) }

        await clock.waitForSleepers(1)
        #expect(service.requests.isEmpty)               // dropped before the server
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        #expect(service.requests.count == 1)            // processed, answer lost
        clock.advance(by: .seconds(2))

        #expect(try await answer.value.count == 2)
        #expect(faults.counts.dropped == 1)
        #expect(faults.counts.cutAfterProcessing == 1)
    }

    @Test("when the attempts run out, the last failure is reported with how many were made")
    func attemptsRunOut() async throws {
        let service = ScriptedServer(Array(repeating: .text("down", status: 503), count: 5), clock: clock)
        let endpoint = service.endpoint(retry: RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), jitter: 0))
        let outcome = Task { try await endpoint.send(endpoint.request(.get, "/items")) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: SyncClientError.self) { try await outcome.value }
        #expect(error?.code == .serverFailed)
        #expect(error?.status == 503)
        #expect(error?.message == "GET /items: server answered 503: down (after 3 attempts)")
        #expect(service.arrivals == [.zero, .seconds(1), .seconds(3)])
    }

    @Test("cancelling a waiting request ends it with CancellationError")
    func cancellationStopsTheWait() async throws {
        let service = ScriptedServer([.text("busy", status: 503)], clock: clock)
        let endpoint = service.endpoint(retry: retry)
        let outcome = Task { try await endpoint.send(endpoint.request(.get, "/items")) }
        await clock.waitForSleepers(1)
        outcome.cancel()
        await #expect(throws: CancellationError.self) { try await outcome.value }
        #expect(service.requests.count == 1)
    }

    @Test("an answer is decoded by its content type; one that no codec reads or that does not fit is an invalid response")
    func decodingByContentType() async throws {
        let endpoint = ScriptedServer([], clock: clock).endpoint(retry: .none)
        let request = endpoint.request(.get, "/items")
        let good = SyncResponse(status: 200, contentType: "text/x-lines; charset=utf-8", body: Array("count=7\nnote=hi".utf8))
        #expect(try endpoint.decode(Greeting.self, from: good, of: request) == Greeting(count: 7, note: "hi"))

        let unknownType = SyncResponse(status: 200, contentType: "application/json", body: Array("{}".utf8))
        let unread = #expect(throws: SyncClientError.self) { try endpoint.decode(Greeting.self, from: unknownType, of: request) }
        #expect(unread?.code == .invalidResponse)
        #expect(unread?.message.contains("application/json") == true)

        let missing = SyncResponse(status: 200, contentType: "text/x-lines", body: Array("note=hi".utf8))
        let unfit = #expect(throws: SyncClientError.self) { try endpoint.decode(Greeting.self, from: missing, of: request) }
        #expect(unfit?.code == .invalidResponse)
        #expect(unfit?.status == 200)
        #expect(unfit?.message.contains("count") == true)
    }

    @Test("a request body is encoded with the default codec, which the request names")
    func requestBodies() throws {
        let endpoint = ScriptedServer([], clock: clock).endpoint(retry: .none)
        let request = try endpoint.request(.post, "/items", body: Greeting(count: 1, note: "x"))
        #expect(request.contentType == "text/x-lines")
        #expect(request.accept == "text/x-lines")
        #expect(request.body == Array("count=1\nnote=x\n".utf8))
    }

    @Test("jitter shortens a wait by at most its share, and backoff stops at the longest wait")
    func backoffAndJitter() {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: .seconds(1), multiplier: 3, maxDelay: .seconds(20), jitter: 0.25)
        #expect((1...5).map(policy.delay(beforeRetry:)) == [.seconds(1), .seconds(3), .seconds(9), .seconds(20), .seconds(20)])
        var generator = SeededGenerator(seed: 5)
        for retry in 1...5 {
            for _ in 0..<50 {
                let wait = policy.jitteredDelay(beforeRetry: retry, using: &generator)
                #expect(wait <= policy.delay(beforeRetry: retry))
                #expect(wait >= policy.delay(beforeRetry: retry) * 0.75)
            }
        }
        #expect(RetryPolicy(jitter: 0).jitteredDelay(beforeRetry: 2, using: &generator) == .milliseconds(400))
    }
}

@Suite("A request's path and query")
struct SyncRequestPathTests {
    @Test("the path stops at the first ?, and the query's items are percent-decoded")
    func pathAndQuery() {
        let request = SyncRequest(method: .get, path: "/deltas/ä/from:4?deviceToken=a%20b&flag&x=1=2&x=3")
        #expect(request.pathWithoutQuery == "/deltas/ä/from:4")
        #expect(request.queryItems == ["deviceToken": "a b", "flag": "", "x": "3"])
        #expect(SyncRequest(method: .get, path: "/rest/Notes").pathWithoutQuery == "/rest/Notes")
        #expect(SyncRequest(method: .get, path: "/rest/Notes").queryItems.isEmpty)
        #expect(SyncRequest(method: .get, path: "?only=query").pathWithoutQuery == "")
        #expect(SyncRequest(method: .get, path: "/p?a=1&&=x&b=c+d%2").queryItems == ["a": "1", "": "x", "b": "c d%2"])
    }
}
