import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing

/// `anchorage serve --console` seen from outside: the real server process, the real `anchorage sync`
/// writing what the console then shows, and the console's JSON API over HTTP.
@Suite("anchorage serve --console: the operator's API")
struct ConsoleCommandTests {
    static let operatorPassword = "console-operator-password"
    static let userPassword = "console-user-password"

    /// A console server on a SQLite store in `folder`, with the operator `op` and the account `ada`.
    static func serve(_ tool: AnchorageTool, in folder: TemporaryFolder, console: Bool = true, extra: [String] = []) async throws
        -> AnchorageTool.Server
    {
        let users = folder.path("users.txt")
        for (account, password, extra) in [("op", operatorPassword, ["--operator"]), ("ada", userPassword, [])] {
            let added = try await tool.run(
                ["users", "add", account, "--file", users, "--iterations", "1000"] + extra, input: Array("\(password)\n".utf8))
            try #require(added.status == 0, "anchorage users add: \(added.errorText)")
        }
        return try await tool.serve(
            ["--store", "sqlite:" + folder.path("server.sqlite"), "--users", users, "--log-level", "warning"]
                + (console ? ["--console"] : []) + extra,
            workingDirectory: folder.path)
    }

    /// Runs `anchorage ARGUMENTS` as ada, requires success, and returns what it printed.
    static func succeed(_ tool: AnchorageTool, _ arguments: [String]) async throws -> String {
        let outcome = try await tool.run(arguments, environment: ["ANCHORAGE_PASSWORD": userPassword, "ANCHORAGE_TOKEN": ""])
        try #require(outcome.status == 0, "anchorage \(arguments.joined(separator: " ")): \(outcome.errorText)")
        return outcome.outputText
    }

    /// `GET path` on the server as `user`.
    static func get(
        _ server: AnchorageTool.Server, _ path: String, as user: (String, String)? = ("op", operatorPassword),
        method: SyncRequest.Method = .get
    ) async throws -> SyncResponse {
        try await HTTPClientTransport(baseURL: server.url).send(
            SyncRequest(method: method, path: path, credentials: user.map { .basic(username: $0.0, password: $0.1) }))
    }

    /// The JSON object of a 200 answer.
    static func json(_ response: SyncResponse, _ what: String) throws -> [String: Any] {
        try #require(response.status == 200, "\(what): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        #expect(response.contentType == "application/json")
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any], "\(what)")
    }

    /// `text` with every character but letters and digits percent-encoded, as the page's `encodeURIComponent` does.
    static func pathPart(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test("only operators use the console: 401 without credentials, 403 for other accounts; the page needs none")
    func onlyOperators() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-access")
        let server = try await Self.serve(tool, in: folder)

        #expect(try await Self.get(server, "/console/api/accounts", as: nil).status == 401)
        #expect(try await Self.get(server, "/console/api/accounts", as: ("op", "wrong")).status == 401)
        let refused = try await Self.get(server, "/console/api/accounts", as: ("ada", Self.userPassword))
        #expect(refused.status == 403)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("not an operator"))
        let me = try Self.json(try await Self.get(server, "/console/api/me"), "me")
        #expect(me["account"] as? String == "op")
        #expect(try await Self.get(server, "/console/api/accounts", method: .post).status == 405)
        #expect(try await Self.get(server, "/console/api/nothing-here").status == 404)

        // The page, its script and style sheet: no credentials, no data, a strict policy.
        let page = try await Self.fetch(server, "/console")
        #expect(page.status == 200)
        #expect(page.headers["Content-Type"].first?.hasPrefix("text/html") == true)
        let policy = page.headers["Content-Security-Policy"].first ?? ""
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'") && !policy.contains("unsafe"))
        #expect(page.headers["X-Content-Type-Options"].first == "nosniff")
        #expect(page.body.contains("/console/console.js") && !page.body.contains("http://") && !page.body.contains("https://"))
        for asset in ["/console/console.js", "/console/console.css"] {
            #expect(try await Self.fetch(server, asset).status == 200, "\(asset)")
        }
    }

    /// `GET path` without credentials, with the answer's headers.
    static func fetch(_ server: AnchorageTool.Server, _ path: String) async throws -> (status: UInt, headers: HTTPHeaders, body: String) {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: server.url.absoluteString + path), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (response.status.code, response.headers, String(buffer: body))
    }

    @Test("without --console there is no console: no page, no API")
    func offUnlessAsked() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-off")
        let server = try await Self.serve(tool, in: folder, console: false)
        #expect(try await Self.get(server, "/console/api/accounts").status == 404)
        #expect(try await Self.fetch(server, "/console").status == 401)
    }

    @Test("account → device → collection → record: what anchorage sync saved a moment before, every field as text")
    func followsASyncedRecord() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-follow")
        let server = try await Self.serve(tool, in: folder)
        let device = ["--store", "sqlite:" + folder.path("phone.sqlite")]
        let payload = #"<img src=x onerror="window.__xss=1">"#
        let gid = try await Self.succeed(tool, ["records", "save"] + device + ["Contact", "name=Ada", "note=\(payload)", "born:int=1815"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await Self.succeed(tool, ["sync", "--server", server.url.absoluteString, "--user", "ada"] + device)

        let accounts = try #require(try Self.json(try await Self.get(server, "/console/api/accounts"), "accounts")["accounts"] as? [[String: Any]])
        #expect(accounts.compactMap { $0["account"] as? String } == ["ada", "op"])
        let ada = try #require(accounts.first)
        #expect(ada["devices"] as? Int == 1)
        #expect((ada["lastPosition"] as? Int ?? 0) >= 1)

        let devices = try #require(try Self.json(try await Self.get(server, "/console/api/accounts/ada/devices"), "devices")["devices"] as? [[String: Any]])
        #expect(devices.count == 1)
        #expect(devices.first?["stack"] as? String == "Aquasync")
        #expect(devices.first?["codec"] as? String == "JSON")
        #expect((devices.first?["bytesIn"] as? Int ?? 0) > 0 && (devices.first?["requests"] as? Int ?? 0) >= 1)
        #expect(devices.first?["lastStatus"] as? Int == 200)

        let collections = try #require(try Self.json(try await Self.get(server, "/console/api/accounts/ada/collections"), "collections")["collections"] as? [[String: Any]])
        let contacts = try #require(collections.first { ($0["collection"] as? String)?.hasSuffix("Contact") == true })
        #expect(contacts["records"] as? Int == 1 && contacts["deleted"] as? Int == 0)
        let collection = try #require(contacts["collection"] as? String)

        let recordPath = "/console/api/accounts/ada/collections/\(Self.pathPart(collection))/records/\(Self.pathPart(gid))"
        let detail = try Self.json(try await Self.get(server, recordPath), "record")
        let record = try #require(detail["record"] as? [String: Any])
        let fields = try #require(record["fields"] as? [[String: Any]])
        var texts: [String: String] = [:]
        for field in fields { texts[field["name"] as? String ?? ""] = field["text"] as? String }
        #expect(texts["name"] == "Ada")
        #expect(texts["note"] == payload)
        #expect(texts["born"] == "1815")
        #expect(fields.first { $0["name"] as? String == "born" }?["type"] as? String == "integer")
        let sizes = try #require(detail["sizes"] as? [[String: Any]])
        #expect(Set(sizes.compactMap { $0["codec"] as? String }) == ["XML plist", "binary plist", "JSON", "MessagePack"])
        #expect(sizes.allSatisfy { ($0["bytes"] as? Int ?? 0) > 0 })
        #expect(try await Self.get(server, recordPath + "x").status == 404)
    }

    @Test("a device registered for push shows its push state; a device's write queues a notification for it")
    func pushState() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-push")
        let server = try await Self.serve(tool, in: folder)
        let registration = try await HTTPClientTransport(baseURL: server.url).send(
            SyncRequest(
                method: .post, path: "/push/register", contentType: "application/json",
                credentials: .basic(username: "ada", password: Self.userPassword),
                body: Array(#"{"deviceToken":"tablet","collections":["aquasync/Contact"]}"#.utf8)))
        try #require(registration.status == 200, "\(String(decoding: registration.body, as: UTF8.self))")
        let device = ["--store", "sqlite:" + folder.path("phone.sqlite")]
        _ = try await Self.succeed(tool, ["records", "save"] + device + ["Contact", "name=Ada"])
        _ = try await Self.succeed(tool, ["sync", "--server", server.url.absoluteString, "--user", "ada"] + device)

        let devices = try #require(try Self.json(try await Self.get(server, "/console/api/accounts/ada/devices"), "devices")["devices"] as? [[String: Any]])
        let tablet = try #require(devices.first { $0["device"] as? String == "tablet" }, "\(devices)")
        let push = try #require(tablet["push"] as? [String: Any])
        #expect(push["connected"] as? Bool == false)
        #expect(push["collections"] as? [String] == ["aquasync/Contact"])
        #expect(push["queued"] as? Int == 1, "the phone's write, kept for the tablet")
        #expect(tablet["stack"] as? String == "push")
        let phone = try #require(devices.first { $0["device"] as? String != "tablet" })
        #expect(phone["push"] is NSNull)
    }

    @Test("the login lock holds for the console: wrong passwords lock the operator out with 429")
    func loginLock() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-lock")
        let server = try await Self.serve(tool, in: folder, extra: ["--login-failures", "2"])
        for _ in 0..<2 { #expect(try await Self.get(server, "/console/api/me", as: ("op", "wrong")).status == 401) }
        let locked = try await Self.get(server, "/console/api/me")
        #expect(locked.status == 429)
        #expect(locked.retryAfter != nil)
    }

    @Test("records page by 100 in id order, deleted ones marked, and the load counts the syncs")
    func pagesAndLoad() async throws {
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("console-pages")
        let server = try await Self.serve(tool, in: folder)
        let device = ["--store", "sqlite:" + folder.path("phone.sqlite")]
        let lines = (0..<250).map { #"{"fields":{"name":"person \#($0)"}}"# }.joined(separator: "\n") + "\n"
        try Data(lines.utf8).write(to: URL(fileURLWithPath: folder.path("people.jsonl")))
        _ = try await Self.succeed(tool, ["records", "import"] + device + ["Contact", folder.path("people.jsonl")])
        let sync = ["sync", "--server", server.url.absoluteString, "--user", "ada"] + device
        _ = try await Self.succeed(tool, sync)
        let listed = try await Self.succeed(tool, ["records", "list"] + device + ["Contact"])
        let doomed = try #require(listed.split(separator: "\n").first.flatMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["gid"] as? String
        })
        _ = try await Self.succeed(tool, ["records", "delete"] + device + ["Contact", doomed])
        _ = try await Self.succeed(tool, sync)

        let collection = Self.pathPart("aquasync/Contact")
        var ids: [String] = []
        var after: String?
        var pages = 0
        var deleted: [String] = []
        repeat {
            let query = after.map { "?after=\(Self.pathPart($0))" } ?? ""
            let page = try Self.json(try await Self.get(server, "/console/api/accounts/ada/collections/\(collection)/records\(query)"), "page")
            let records = try #require(page["records"] as? [[String: Any]])
            #expect(records.count <= 100)
            ids += records.compactMap { $0["id"] as? String }
            deleted += records.filter { $0["deleted"] as? Bool == true }.compactMap { $0["id"] as? String }
            after = page["next"] as? String
            pages += 1
        } while after != nil && pages < 10
        #expect(pages == 3)
        #expect(ids.count == 250)
        #expect(ids == ids.sorted() && Set(ids).count == 250)
        #expect(deleted == [doomed])
        #expect(try await Self.get(server, "/console/api/accounts/ada/collections/\(collection)/records?limit=0").status == 400)
        #expect(try await Self.get(server, "/console/api/accounts/ada/collections/\(collection)/records?limit=501").status == 400)

        let load = try Self.json(try await Self.get(server, "/console/api/load"), "load")
        let samples = try #require(load["samples"] as? [[String: Any]])
        #expect(samples.count == 300)
        let syncs = samples.compactMap { $0["syncs"] as? Int }.reduce(0, +)
        #expect(syncs >= 2, "the two syncs' requests")
        #expect(samples.contains { $0["p99"] is Double })
        #expect(load["pushConnections"] as? Int == 0)
    }
}
