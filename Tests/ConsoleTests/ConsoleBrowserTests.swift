import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// The operator console in a real browser: headless Chromium driven by Selenium
/// (`Tests/Browser/console_browser.py`; Debian's `chromium`, `chromium-driver` and `python3-selenium`,
/// which `scripts/install-deps.sh --browser` installs) against a real `anchorage serve --console`,
/// with records written by the real `anchorage sync`. One server for the suite.
///
/// With `ANCHORAGE_CONSOLE_SCREENSHOTS=DIR` the suite also saves a screenshot of each view into DIR
/// (docs/console/ holds the ones docs/console.md shows).
@Suite(
    "operator console in headless Chromium", .serialized,
    .enabled(if: SlowTests.enabled, "starts Chromium for each scenario (a minute in all): \(SlowTests.howToRun)"))
struct ConsoleBrowserTests {
    /// The server, its accounts and what was synced to it, made once for the suite.
    struct World: Sendable {
        let folder: TemporaryFolder
        let server: AnchorageTool.Server
        /// ada's phone: the device token the console knows it by, and its store.
        let phone: String
        let phoneStore: String
        /// The collection both accounts' records are in.
        let collection = "aquasync/Contact"
        /// ada's record, and the one whose field is markup.
        let record: String
        let markupRecord: String
        /// An id deep in grace's 10,000 records.
        let deepRecord: String
    }

    /// The suite's server process, stopped at exit.
    static let serverToStop = Atomic<pid_t>(0)

    static let operatorLogin = "op:console-operator-secret"
    static let adaPassword = "ada-secret"
    static let payload = #"<img src=x onerror="window.__xss=1">"#

    static let made = MadeOnce { () -> Result<World, ConsoleSetupError> in
        do {
            return .success(try await makeWorld())
        } catch {
            return .failure(ConsoleSetupError(description: "\(error)"))
        }
    }

    /// Why the suite's server could not be made.
    struct ConsoleSetupError: Error, CustomStringConvertible {
        var description: String
    }

    static func makeWorld() async throws -> World {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-browser")
        let users = folder.path("users.txt")
        for (account, password, extra) in [
            ("op", "console-operator-secret", ["--operator"]), ("ada", adaPassword, []), ("grace", adaPassword, []),
        ] {
            let added = try await tool.run(
                ["users", "add", account, "--file", users, "--iterations", "1000"] + extra, input: Array("\(password)\n".utf8))
            guard added.status == 0 else { throw ConsoleSetupError(description: "users add: \(added.errorText)") }
        }
        let server = try await tool.serve(
            ["--store", "sqlite:" + folder.path("server.sqlite"), "--users", users, "--console", "--log-level", "warning"],
            workingDirectory: folder.path)
        // It serves every test of the suite, so none stops it: the test process does, when it exits.
        serverToStop.store(server.process.pid, ordering: .relaxed)
        atexit {
            let pid = ConsoleBrowserTests.serverToStop.exchange(0, ordering: .relaxed)
            if pid > 0 { kill(pid, SIGTERM) }
        }
        func succeed(_ arguments: [String]) async throws -> String {
            let outcome = try await tool.run(arguments, environment: ["ANCHORAGE_PASSWORD": adaPassword, "ANCHORAGE_TOKEN": ""])
            guard outcome.status == 0 else {
                throw ConsoleSetupError(description: "anchorage \(arguments.joined(separator: " ")): \(outcome.errorText)")
            }
            return outcome.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let phoneStore = "sqlite:" + folder.path("phone.sqlite")
        let record = try await succeed(["records", "save", "--store", phoneStore, "Contact", "name=Ada Lovelace", "born:int=1815"])
        let markup = try await succeed(["records", "save", "--store", phoneStore, "Contact", "name=\(payload)", "note=<script>window.__xss=2</script>"])
        _ = try await succeed(["sync", "--store", phoneStore, "--server", server.url.absoluteString, "--user", "ada"])

        // grace's laptop: 10,000 records in one collection.
        let laptopStore = "sqlite:" + folder.path("laptop.sqlite")
        let lines = (0..<10_000).map { #"{"fields":{"name":"person \#($0)","n":\#($0)}}"# }.joined(separator: "\n") + "\n"
        try Data(lines.utf8).write(to: URL(fileURLWithPath: folder.path("people.jsonl")))
        _ = try await succeed(["records", "import", "--store", laptopStore, "Contact", folder.path("people.jsonl")])
        _ = try await succeed(["sync", "--store", laptopStore, "--server", server.url.absoluteString, "--user", "grace"])
        let ids = try await succeed(["records", "list", "--store", laptopStore, "Contact"]).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["gid"] as? String
        }.sorted()
        guard ids.count == 10_000 else { throw ConsoleSetupError(description: "grace's laptop lists \(ids.count) records") }

        // The console knows ada's phone by the device token its sync sent (Aquasync's, made by the phone's store).
        let devices = try await HTTPClientTransport(baseURL: server.url).send(
            SyncRequest(
                method: .get, path: "/console/api/accounts/ada/devices",
                credentials: .basic(username: "op", password: "console-operator-secret")))
        let listed = (try? JSONSerialization.jsonObject(with: Data(devices.body)) as? [String: Any])?["devices"] as? [[String: Any]]
        guard let phone = listed?.first?["device"] as? String, listed?.count == 1 else {
            throw ConsoleSetupError(description: "the console lists ada's devices as \(String(decoding: devices.body, as: UTF8.self))")
        }
        return World(
            folder: folder, server: server, phone: phone, phoneStore: phoneStore, record: record, markupRecord: markup,
            deepRecord: ids[9_000])
    }

    static func world() async throws -> World {
        switch await made.value {
        case .success(let world): return world
        case .failure(let error): throw error
        }
    }

    /// Runs one scenario of the driver and returns its JSON result; fails the test with the driver's error line.
    static func drive(_ world: World, _ scenario: String, _ arguments: [String]) async throws -> [String: Any] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/console_browser.py").path
        let outcome = try await ChildProcess.run(
            "/usr/bin/env",
            arguments: ["python3", script, "--url", world.server.url.absoluteString, "--scenario", scenario] + arguments)
        try #require(
            outcome.status == 0,
            "\(scenario): \(outcome.errorText.split(separator: "\n").last.map(String.init) ?? "exit \(outcome.status)") (needs scripts/install-deps.sh --browser)")
        let last = try #require(outcome.outputText.split(separator: "\n").last, "\(scenario) printed nothing")
        return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(scenario): \(last)")
    }

    @Test("an operator logs in and follows account → device → collection → the record anchorage sync saved")
    func browse() async throws {
        let world = try await Self.world()
        let result = try await Self.drive(
            world, "browse",
            ["--operator", Self.operatorLogin, "--account", "ada", "--device", world.phone, "--collection", world.collection,
             "--record", world.record, "--expect-field", "name=Ada Lovelace", "--expect-field", "born=1815"])
        #expect(result["ok"] as? Bool == true)
        let fields = result["fields"] as? [String: String]
        #expect(fields?["name"] == "Ada Lovelace")
        if let loadMs = result["loadMs"] as? Double { print("console page loaded in \(loadMs) ms") }
    }

    @Test("a field holding markup shows as those characters, and no script of it runs")
    func markupStaysText() async throws {
        let world = try await Self.world()
        let result = try await Self.drive(
            world, "xss",
            ["--operator", Self.operatorLogin, "--account", "ada", "--collection", world.collection, "--record", world.markupRecord])
        let shown = try #require(result["shown"] as? [String: String])
        #expect(shown["name"] == Self.payload)
        #expect(shown["note"] == "<script>window.__xss=2</script>")
    }

    @Test("an account that is not an operator is told so and sees nothing")
    func notAnOperator() async throws {
        let world = try await Self.world()
        let result = try await Self.drive(world, "forbidden", ["--user", "ada:\(Self.adaPassword)"])
        #expect(result["ok"] as? Bool == true)
    }

    @Test("the live chart moves while devices sync")
    func liveChart() async throws {
        let world = try await Self.world()
        let tool = try AnchorageTool()
        let load = Task {
            var syncs = 0
            while !Task.isCancelled {
                let outcome = try await tool.run(
                    ["sync", "--store", world.phoneStore, "--server", world.server.url.absoluteString, "--user", "ada"],
                    environment: ["ANCHORAGE_PASSWORD": Self.adaPassword, "ANCHORAGE_TOKEN": ""])
                if outcome.status == 0 { syncs += 1 }
            }
            return syncs
        }
        let result = try await finally {
            try await Self.drive(world, "live", ["--operator", Self.operatorLogin])
        } then: {
            load.cancel()
        }
        #expect((result["maxSyncs"] as? Int ?? 0) > 0)
        #expect((result["refreshes"] as? Int ?? 0) >= 3)
        #expect(try await load.value > 0)
    }

    @Test("paging through 10,000 records a hundred at a time, and the search by id")
    func paging() async throws {
        let world = try await Self.world()
        let result = try await Self.drive(
            world, "paging",
            ["--operator", Self.operatorLogin, "--account", "grace", "--collection", world.collection, "--record", world.deepRecord,
             "--pages", "5"])
        let pageTimes = try #require(result["pageMs"] as? [Double])
        #expect(pageTimes.count == 5)
        print("console pages rendered in \(pageTimes) ms")
    }

    @Test(
        "screenshots of every view, when asked for",
        .enabled(if: ProcessInfo.processInfo.environment["ANCHORAGE_CONSOLE_SCREENSHOTS"] != nil || SlowTests.enabled))
    func screenshots() async throws {
        let world = try await Self.world()
        let folder = ProcessInfo.processInfo.environment["ANCHORAGE_CONSOLE_SCREENSHOTS"] ?? world.folder.path("screenshots")
        let result = try await Self.drive(
            world, "screenshots",
            ["--operator", Self.operatorLogin, "--account", "ada", "--collection", world.collection, "--record", world.markupRecord,
             "--screenshots", folder])
        let files = try #require(result["screenshots"] as? [String])
        #expect(files.count == 6)
        #expect(files.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }
}
