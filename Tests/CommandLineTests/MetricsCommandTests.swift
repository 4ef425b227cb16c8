import Foundation
import SyncCore
import SyncHTTPClient
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve`'s `/metrics`, `/health`, `/ready` and its logs, seen from outside:
/// the real server process, and the real `anchorage sync` of each stack against it.
@Suite("anchorage serve: metrics, probes and logs")
struct MetricsCommandTests {
    static let password = "metrics-cli-password"

    /// A server on a memory store with the account `ada`, in `folder`.
    static func serve(_ tool: AnchorageTool, in folder: TemporaryFolder, _ arguments: [String] = []) async throws
        -> AnchorageTool.Server
    {
        let added = try await tool.run(
            ["users", "add", "ada", "--file", folder.path("users.txt"), "--iterations", "1000"],
            input: Array("\(password)\n".utf8))
        try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        return try await tool.serve(
            ["--store", "memory", "--users", folder.path("users.txt")] + arguments, workingDirectory: folder.path)
    }

    /// Runs `anchorage ARGUMENTS` with ada's password, requires success, and returns what it printed.
    static func succeed(_ tool: AnchorageTool, _ arguments: [String]) async throws -> String {
        let outcome = try await tool.run(arguments, environment: ["ANCHORAGE_PASSWORD": password, "ANCHORAGE_TOKEN": ""])
        try #require(outcome.status == 0, "anchorage \(arguments.joined(separator: " ")): \(outcome.errorText)")
        return outcome.outputText
    }

    /// Every sample of a Prometheus text exposition, by `name{labels}`.
    static func scrape(_ server: AnchorageTool.Server) async throws -> [String: Double] {
        let response = try await HTTPClientTransport(baseURL: server.url).send(SyncRequest(method: .get, path: "/metrics"))
        try #require(response.status == 200, "GET /metrics: \(response.status)")
        #expect(response.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
        var samples: [String: Double] = [:]
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                Issue.record("not a sample line: \(line)")
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// How much each sample moved from `before` to `after` (absent counts as 0), without the ones that did not.
    static func moved(_ before: [String: Double], _ after: [String: Double], only prefixes: [String]) -> [String: Double] {
        var moved: [String: Double] = [:]
        for (name, value) in after where prefixes.contains(where: { name.hasPrefix($0 + "{") }) {
            let change = value - (before[name] ?? 0)
            if change != 0 { moved[name] = change }
        }
        return moved
    }

    static let counted = [
        "anchorage_http_requests_total", "anchorage_records_received_total", "anchorage_records_sent_total",
        "anchorage_conflicts_total",
    ]

    /// What `records save` names a record by in `stack`.
    static func model(_ stack: String) -> String {
        switch stack {
        case "appsync": "booking"
        case "ota": "com.apple.contacts.Contact"
        default: "Contact"
        }
    }

    @Test("a sync of each stack moves the request, record and conflict counters by exactly what it did")
    func countersMoveByTheSync() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("metrics-cli")
        let server = try await Self.serve(tool, in: folder, ["--log-level", "warning"])
        let records = ["aquasync": 2, "appsync": 3, "ota": 4]
        // The requests each sync makes: Aquasync pushes on the condition that nothing waits to be pulled
        // (one request); the second device pulls once. appSync uploads and lists; the second device lists.
        // OTA takes two round trips each.
        let firstRequests: [String: [String: Double]] = [
            "aquasync": ["200": 1], "appsync": ["200": 2], "ota": ["200": 2],
        ]
        let timedOperations = ["aquasync": ["pull", "push"], "appsync": ["list"], "ota": ["message"]]
        let secondRequests: [String: [String: Double]] = ["aquasync": ["200": 1], "appsync": ["200": 1], "ota": ["200": 2]]

        for stack in ["aquasync", "appsync", "ota"] {
            let count = records[stack]!
            let deviceA = ["--stack", stack, "--store", "sqlite:" + folder.path("\(stack)-a.sqlite")]
            let deviceB = ["--stack", stack, "--store", "sqlite:" + folder.path("\(stack)-b.sqlite")]
            for index in 0..<count {
                _ = try await Self.succeed(
                    tool,
                    ["records", "save"] + deviceA + (stack == "ota" ? ["--user", "ada"] : [])
                        + [Self.model(stack), "name=n\(index)", "pk=k\(index)"])
            }
            let sync = ["sync", "--server", server.url.absoluteString, "--user", "ada"]

            let beforeA = try await Self.scrape(server)
            _ = try await Self.succeed(tool, sync + deviceA)
            let afterA = try await Self.scrape(server)
            var expected = [#"anchorage_records_received_total{stack="\#(stack)"}"#: Double(count)]
            for (status, requests) in firstRequests[stack]! {
                expected[#"anchorage_http_requests_total{stack="\#(stack)",status="\#(status)"}"#] = requests
            }
            #expect(Self.moved(beforeA, afterA, only: Self.counted) == expected, "\(stack): the first device's sync")

            _ = try await Self.succeed(tool, sync + deviceB)
            let afterB = try await Self.scrape(server)
            expected = [#"anchorage_records_sent_total{stack="\#(stack)"}"#: Double(count)]
            for (status, requests) in secondRequests[stack]! {
                expected[#"anchorage_http_requests_total{stack="\#(stack)",status="\#(status)"}"#] = requests
            }
            #expect(Self.moved(afterA, afterB, only: Self.counted) == expected, "\(stack): the second device's sync")
            let timed = timedOperations[stack]!.map {
                afterB[#"anchorage_sync_duration_seconds_count{stack="\#(stack)",operation="\#($0)"}"#] ?? 0
            }
            #expect(timed.reduce(0, +) >= 2, "\(stack): sync durations recorded")
        }

        // Aquasync's conflicts: both devices change the same record; the second push meets the first's version.
        let deviceA = ["--stack", "aquasync", "--store", "sqlite:" + folder.path("aquasync-a.sqlite")]
        let deviceB = ["--stack", "aquasync", "--store", "sqlite:" + folder.path("aquasync-b.sqlite")]
        let sync = ["sync", "--server", server.url.absoluteString, "--user", "ada"]
        let gid = try await Self.succeed(tool, ["records", "save"] + deviceA + ["Contact", "name=shared"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await Self.succeed(tool, sync + deviceA)
        _ = try await Self.succeed(tool, sync + deviceB)
        _ = try await Self.succeed(tool, ["records", "save"] + deviceA + ["--gid", gid, "Contact", "name=from A"])
        _ = try await Self.succeed(tool, ["records", "save"] + deviceB + ["--gid", gid, "Contact", "name=from B"])
        _ = try await Self.succeed(tool, sync + deviceA)
        let beforeConflict = try await Self.scrape(server)
        let conflicting = try await Self.succeed(tool, sync + deviceB)
        let afterConflict = try await Self.scrape(server)
        let conflictsMoved = Self.moved(beforeConflict, afterConflict, only: ["anchorage_conflicts_total"])
        #expect(conflictsMoved == [#"anchorage_conflicts_total{stack="aquasync"}"#: 1], "\(conflicting)")

        // A wrong password is counted under its stack as 401; the store was timed; nothing is in flight.
        let refused = try await tool.run(
            ["sync", "--server", server.url.absoluteString, "--stack", "aquasync", "--user", "ada", "--store",
             "sqlite:" + folder.path("aquasync-a.sqlite")],
            environment: ["ANCHORAGE_PASSWORD": "wrong", "ANCHORAGE_TOKEN": ""])
        #expect(refused.status != 0)
        let last = try await Self.scrape(server)
        #expect(last[#"anchorage_http_requests_total{stack="aquasync",status="401"}"#, default: 0] - afterConflict[#"anchorage_http_requests_total{stack="aquasync",status="401"}"#, default: 0] == 1)
        #expect((last[#"anchorage_store_duration_seconds_count{operation="transaction"}"#] ?? 0) > 0, "\(last.keys.sorted())")
        #expect(last["anchorage_http_requests_in_flight"] == 0)
        #expect(try await server.process.terminate() == 0)
    }

    @Test("/health and /ready answer 200 without credentials; --no-metrics leaves /metrics to authentication")
    func probesAndOptOut() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("metrics-cli-probes")
        let server = try await Self.serve(tool, in: folder, ["--log-level", "warning", "--no-metrics"])
        let transport = HTTPClientTransport(baseURL: server.url)
        #expect(try await transport.send(SyncRequest(method: .get, path: "/health")).status == 200)
        #expect(try await transport.send(SyncRequest(method: .get, path: "/ready")).status == 200)
        #expect(try await transport.send(SyncRequest(method: .get, path: "/metrics")).status == 401)
        #expect(try await server.process.terminate() == 0)
    }

    @Test("--log-format json writes one JSON object a line, and each request's line carries its own request id")
    func jsonLogs() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("metrics-cli-json")
        let server = try await Self.serve(tool, in: folder, ["--log-level", "debug", "--log-format", "json"])
        let device = ["--stack", "aquasync", "--store", "sqlite:" + folder.path("device.sqlite")]
        _ = try await Self.succeed(tool, ["records", "save"] + device + ["Contact", "name=Ada"])
        // Two syncs: the first pushes (one request), the second, with nothing to send, pulls.
        for _ in 0..<2 { _ = try await Self.succeed(tool, ["sync", "--server", server.url.absoluteString, "--user", "ada"] + device) }
        #expect(try await server.process.terminate() == 0)

        let lines = String(decoding: server.process.standardError, as: UTF8.self).split(separator: "\n")
        var requestIDs: [String] = []
        var requestLines: [String] = []
        for line in lines {
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
            #expect(object["time"] is String && object["level"] is String && object["message"] is String, "\(line)")
            #expect(object["label"] as? String == "anchorage.serve", "\(line)")
            if let metadata = object["metadata"] as? [String: Any], metadata["http.path"] != nil {
                requestLines.append(String(line))
                requestIDs.append(try #require(metadata["request.id"] as? String, "a request line without its id: \(line)"))
            }
        }
        #expect(lines.count > 2)
        #expect(requestIDs.count == 2, "the first sync's push and the second's pull: \(requestLines)")
        #expect(Set(requestIDs).count == requestIDs.count && requestIDs.allSatisfy { UUID(uuidString: $0) != nil }, "\(requestIDs)")
    }
}
