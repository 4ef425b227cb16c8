#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SyncCore
import SyncJSON
import SyncTesting
import Synchronization
import TestSupport
import Testing

/// The `anchorage` executable, built beside the test bundle.
private let anchorage = ChildProcess.builtExecutable(named: "anchorage")

/// `anchorage records` and `anchorage sync`, run as separate processes on
/// SQLite stores over real HTTP, the way a user enters records: every value
/// comes back as typed, in every stack and codec.
@Suite("anchorage records: values as typed, accounts remembered")
struct RecordsCommandTests {
    static let password = "records-cli-password"
    static let stacks = ["aquasync", "appsync", "ota"]
    static let codecs = ["json", "xml-plist", "binary-plist", "msgpack"]
    static let photo: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x00, 0x01, 0xFF, 0x0A]

    /// Text that must stay text, exactly: none of it reads back as typed if it were made a number.
    static let texts: [String: String] = [
        "zip": "02134", "phone": "0123456789", "intl": "+4930123456", "exp": "1e3", "hex": "0x10", "price": "1.50",
        "spaced": " 7", "minus zero": "-0", "trailing": "true ", "empty": "", "equation": "a=b", "time": "12:30",
    ]

    /// The arguments that save the record every test uses: the texts, inferred and typed values, JSON values,
    /// and, when `withDateAndData`, a date and bytes from a file.
    static func fieldArguments(photoFile: String, withDateAndData: Bool) -> [String] {
        var arguments = texts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        arguments += [
            "count=42", "score=2.5", "ok=false", "born:int=1815", "ratio:real=1.50", "flag:bool=true",
            "code:string=12345", "big:integer=007",
            #"emails:json=[{"label":"home","value":"a@b.c"},{"label":"work","value":"ada@example.org"}]"#,
            #"address:json={"city":"Boston","zip":"02134","lines":["1 Main St",""],"floor":3,"share":0.5,"lift":true}"#,
            "tags:json=[]",
        ]
        if withDateAndData { arguments += ["when:date=2026-01-01T00:00:00Z", "photo:data=@" + photoFile] }
        return arguments
    }

    /// The fields `records list` prints for that record (decoded from its JSON line); with `datesAsText`
    /// the date and data as JSON carries them, as text.
    static func expectedFields(withDateAndData: Bool, datesAsText: Bool = false) -> [String: SyncValue] {
        var fields = texts.mapValues { SyncValue.string($0) }
        fields.merge(
            [
                "count": 42, "score": 2.5, "ok": false, "born": 1815, "ratio": 1.5, "flag": true, "code": "12345", "big": 7,
                "emails": [["label": "home", "value": "a@b.c"], ["label": "work", "value": "ada@example.org"]],
                "address": [
                    "city": "Boston", "zip": "02134", "lines": ["1 Main St", ""], "floor": 3, "share": 0.5, "lift": true,
                ],
                "tags": [],
            ]
        ) { _, new in new }
        if withDateAndData {
            let base64 = SyncValue.string(Data(photo).base64EncodedString())
            fields["when"] = datesAsText ? "2026-01-01T00:00:00Z" : ["$date": "2026-01-01T00:00:00Z"]
            fields["photo"] = datesAsText ? base64 : ["$data": base64]
        }
        return fields
    }

    @Test(
        "text stays text and typed values keep their type: saved, listed, synced over HTTP and listed on another device",
        arguments: stacks, codecs)
    func valuesTravelAsTyped(stack: String, codec: String) async throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = try TemporaryFolder("records-\(stack)-\(codec)")
        let photoFile = folder.path("photo.bin")
        try Data(Self.photo).write(to: URL(fileURLWithPath: photoFile))
        let server = try await Server.start(tool, in: folder)
        let deviceA = ["--stack", stack, "--store", "sqlite:" + folder.path("a.sqlite")]
        let deviceB = ["--stack", stack, "--store", "sqlite:" + folder.path("b.sqlite")]

        // Every codec carries the texts, numbers, Booleans, arrays and dictionaries; JSON carries
        // dates and data as text (docs/codecs.md), so they arrive as text on the other device.
        let model = Self.model(stack)
        let saveA = ["records", "save"] + deviceA + (stack == "ota" ? ["--user", "ada"] : []) + [model, "--"]
            + Self.fieldArguments(photoFile: photoFile, withDateAndData: true)
        let id = try await Self.succeed(tool, saveA).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)

        let listedOnA = try Self.listed(try await Self.succeed(tool, Self.list(stack) + deviceA))
        try #require(listedOnA.count == 1, "\(listedOnA)")
        #expect(Self.differences(listedOnA[0], Self.expectedFields(withDateAndData: true)) == [], "on device A")

        let sync = ["sync", "--server", server.url, "--codec", codec]
        let sentA = try await Self.succeed(tool, sync + ["--user", "ada"] + deviceA)
        #expect(sentA.contains(stack == "aquasync" ? "pushed 1" : stack == "appsync" ? "uploaded 1" : "sent 1,"), "\(sentA)")
        let receivedB = try await Self.succeed(tool, sync + ["--user", "ada"] + deviceB)
        #expect(
            receivedB.contains(stack == "aquasync" ? "pulled 1" : stack == "appsync" ? "downloaded 1" : "received 1;"),
            "\(receivedB)")
        let listedOnB = try Self.listed(try await Self.succeed(tool, Self.list(stack) + deviceB))
        try #require(listedOnB.count == 1, "\(listedOnB)")
        let expectedOnB = Self.expectedFields(withDateAndData: true, datesAsText: codec == "json")
        #expect(Self.differences(listedOnB[0], expectedOnB) == [], "on device B, after a sync in \(codec)")

        // Both stores remember the account: a later sync needs only the password.
        let again = try await Self.run(tool, sync + deviceA)
        #expect(again.status == 0, "sync without --user after one with it: \(again.errorText)")
        let stillOnA = try Self.listed(try await Self.succeed(tool, Self.list(stack) + deviceA))
        #expect(stillOnA.count == 1)
        #expect(try await Self.run(tool, sync + deviceB).status == 0)
        await server.stop()
    }

    @Test("a listed value saved back with NAME:json= is the same value", arguments: stacks)
    func listedFormRoundTrips(stack: String) async throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = try TemporaryFolder("records-json-\(stack)")
        let photoFile = folder.path("photo.bin")
        try Data(Self.photo).write(to: URL(fileURLWithPath: photoFile))
        let device = ["--stack", stack, "--store", "sqlite:" + folder.path("device.sqlite")] + (stack == "ota" ? ["--user", "ada"] : [])
        let special = [
            #"literal:json={"$dictionary":{"$date":"not a date"}}"#,
            #"nested:json=[{"$date":"2026-01-01T00:00:00.5Z"},{"$real":"nan"},null]"#, "nothing:json=null",
        ]
        let first = try await Self.succeed(
            tool, ["records", "save"] + device + [Self.model(stack), "--"]
                + Self.fieldArguments(photoFile: photoFile, withDateAndData: true) + special)
        let lines = try await Self.succeed(tool, Self.list(stack) + device)
        let listed = try #require(try Self.listed(lines).first)
        #expect(lines.contains(#""when":{"$date":"2026-01-01T00:00:00Z"}"#), "\(lines)")
        #expect(listed["literal"] == ["$dictionary": ["$date": "not a date"]], "a dictionary that looks like a tag stays one")
        #expect(listed["nested"] == [["$date": "2026-01-01T00:00:00.5Z"], ["$real": "nan"], .null])

        // Save every listed field back as JSON, as a second record: it lists the same.
        let asJSON = try listed.sorted { $0.key < $1.key }.map { name, value in
            "\(name):json=" + String(decoding: try JSONCodec().encode(value), as: UTF8.self)
        }
        let second = try await Self.succeed(tool, ["records", "save"] + device + [Self.model(stack), "--"] + asJSON)
        #expect(second != first)
        let both = try Self.listed(try await Self.succeed(tool, Self.list(stack) + device))
        #expect(both.count == 2 && both.allSatisfy { $0 == listed }, "\(both)")
    }

    @Test("a password without an account stops with one line naming --user, before any connection", arguments: stacks)
    func passwordWithoutAccount(stack: String) async throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = try TemporaryFolder("records-account-\(stack)")
        let listener = try SilentListener()
        listener.start()
        defer { listener.stop() }
        let store = ["--store", "sqlite:" + folder.path("fresh.sqlite")]
        let sync = ["sync", "--stack", stack, "--server", "http://127.0.0.1:\(listener.port)"] + store

        let noAccount = try await Self.run(tool, sync)
        #expect(noAccount.status == 64, "\(noAccount.errorText)")
        #expect(Self.isOneLine(noAccount.errorText) && noAccount.errorText.contains("--user"), "\(noAccount.errorText)")

        let noPassword = try await Self.run(tool, sync + ["--user", "ada"], password: nil)
        #expect(noPassword.status == 64, "\(noPassword.errorText)")
        #expect(
            Self.isOneLine(noPassword.errorText) && noPassword.errorText.contains("ANCHORAGE_PASSWORD"), "\(noPassword.errorText)")
        #expect(listener.connections() == 0, "anchorage connected to the server")
    }

    @Test("a field that cannot be read is one line and exit status 64, and nothing is saved")
    func badFields() async throws {
        let tool = try #require(anchorage, "the anchorage executable was not found beside the test bundle")
        let folder = try TemporaryFolder("records-bad")
        let store = ["--store", "sqlite:" + folder.path("device.sqlite")]
        let cases: [(String, String)] = [
            ("born:itn=1815", "itn"), ("born:int=18.15", "18.15"), ("born:int= 1815", "whole number"),
            ("flag:bool=yes", "true or false"), ("when:date=tomorrow", "ISO 8601"), ("photo:data=@/no/such/file", "/no/such/file"),
            ("emails:json=[", "JSON"), (#"when:json={"$date":"soon"}"#, "ISO 8601"), ("no equals sign", "NAME=VALUE"),
            ("=Ada", "no field name"),
        ]
        for (argument, named) in cases {
            let outcome = try await Self.run(tool, ["records", "save", "Contact", "name=Ada", argument] + store)
            #expect(outcome.status == 64, "\(argument): \(outcome.errorText)")
            #expect(Self.isOneLine(outcome.errorText) && outcome.errorText.contains(named), "\(argument): \(outcome.errorText)")
        }
        let saved = try await Self.succeed(tool, ["records", "list", "Contact"] + store)
        #expect(saved.isEmpty)
        // A field whose own name ends in :WORD is written with a type.
        _ = try await Self.succeed(tool, ["records", "save", "Contact", "a:b:string=x"] + store)
        #expect(try Self.listed(try await Self.succeed(tool, ["records", "list", "Contact"] + store)) == [["a:b": "x"]])
    }

    // MARK: Helpers

    /// What `records save` names a record by in `stack`: a model, an appSync type, an OTA entity.
    static func model(_ stack: String) -> String {
        switch stack {
        case "appsync": "booking"
        case "ota": "com.apple.contacts.Contact"
        default: "Contact"
        }
    }

    /// The `records list` command of `stack`, before the device options.
    static func list(_ stack: String) -> [String] {
        stack == "ota" ? ["records", "list"] : ["records", "list", model(stack)]
    }

    /// The `fields` of each line of `records list`, in the listed (JSON) form.
    static func listed(_ output: String) throws -> [[String: SyncValue]] {
        try output.split(separator: "\n").map { line in
            try #require(try JSONCodec().decode(Array(line.utf8))["fields"]?.dictionaryValue, "\(line)")
        }
    }

    /// The fields where `listed` differs from `expected`, as "name: listed ≠ expected".
    static func differences(_ listed: [String: SyncValue], _ expected: [String: SyncValue]) -> [String] {
        Set(listed.keys).union(expected.keys).sorted().compactMap { name in
            listed[name] == expected[name]
                ? nil : "\(name): \(listed[name].map { "\($0)" } ?? "missing") ≠ \(expected[name].map { "\($0)" } ?? "missing")"
        }
    }

    static func isOneLine(_ text: String) -> Bool {
        text.hasPrefix("anchorage: ") && text.hasSuffix("\n") && text.dropLast().split(separator: "\n").count == 1
    }

    /// Runs `anchorage` with the password (or none) and no token in its environment.
    static func run(_ tool: String, _ arguments: [String], password: String? = RecordsCommandTests.password) async throws -> ChildProcess.Outcome {
        let environment = ["ANCHORAGE_PASSWORD": password ?? "", "ANCHORAGE_TOKEN": ""]
        return try await ChildProcess.run(tool, arguments: arguments, environment: environment)
    }

    /// Runs `anchorage`, requires it to succeed, and returns what it printed.
    static func succeed(_ tool: String, _ arguments: [String]) async throws -> String {
        let outcome = try await run(tool, arguments)
        try #require(
            outcome.status == 0, "anchorage \(arguments.joined(separator: " ")) exited with \(outcome.status): \(outcome.errorText)")
        return outcome.outputText
    }
}

/// `anchorage serve` on a free port and a memory store, with the account `ada`.
private struct Server: Sendable {
    let process: ChildProcess.Running
    let url: String

    static func start(_ tool: String, in folder: TemporaryFolder) async throws -> Server {
        let users = folder.path("users.txt")
        let added = try await ChildProcess.run(
            tool, arguments: ["users", "add", "ada", "--file", users, "--iterations", "1000"],
            input: Array("\(RecordsCommandTests.password)\n".utf8))
        try #require(added.status == 0, "anchorage users add failed: \(added.errorText)")
        let process = try ChildProcess.start(
            tool, arguments: ["serve", "--port", "0", "--store", "memory", "--users", users, "--log-level", "warning"])
        let url = try await process.waitForOutputLine(timeout: .seconds(300)) { line in
            line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init)
        }
        return Server(process: process, url: url)
    }

    func stop() async {
        let status = try? await process.terminate()
        #expect(status == 0, "the server stopped with \(String(describing: status)): \(String(decoding: process.standardError, as: UTF8.self))")
    }
}

/// A loopback TCP port that counts the connections made to it and closes each at once:
/// proof that a command did not contact a server there.
private final class SilentListener: Sendable {
    let port: Int
    private let socketFD: Int32
    private let accepted = Count()

    /// A number that threads share.
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    init() throws {
        (socketFD, port) = try LoopbackSocket.bind(listening: true)
    }

    /// Accepts and closes connections on a thread of its own until ``stop()``; returns at once.
    func start() {
        Thread { [socketFD, accepted] in
            while true {
                let connection = accept(socketFD, nil, nil)
                if connection >= 0 {
                    accepted.value.withLock { $0 += 1 }
                    close(connection)
                } else if errno != EINTR {
                    return  // stop() shut the socket down
                }
            }
        }.start()
    }

    /// How many connections were made so far.
    func connections() -> Int { accepted.value.withLock { $0 } }

    /// Stops listening, which ends the accepting thread.
    func stop() {
        shutdown(socketFD, Int32(SHUT_RDWR))
        close(socketFD)
    }
}
