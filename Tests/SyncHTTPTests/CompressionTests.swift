import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncCore
import SyncHTTPClient
import SyncHTTPServer
import SyncJSON
import SyncTesting
import TestSupport
import Testing

/// HTTP compression on the server, both ways, checked with Python's zlib as the independent side.
@Suite("HTTP compression: the server")
struct ServerCompressionTests {
    static let python = PythonProgram(
        """
        import gzip, sys, zlib
        command = sys.argv[1]
        data = sys.stdin.buffer.read()
        if command == "gunzip":
            sys.stdout.buffer.write(gzip.decompress(data))
        elif command == "inflate":
            sys.stdout.buffer.write(zlib.decompress(data))
        elif command == "gzip":
            sys.stdout.buffer.write(gzip.compress(data))
        elif command == "bomb":
            # A gzip stream of int(sys.argv[2]) MiB of zeros, made a MiB at a time.
            out = zlib.compressobj(9, zlib.DEFLATED, 31)
            chunk = bytes(1 << 20)
            parts = [out.compress(chunk) for _ in range(int(sys.argv[2]))]
            sys.stdout.buffer.write(b"".join(parts) + out.flush())
        """, requiring: ["gzip", "zlib"])

    static func post(_ url: String, body: [UInt8], headers: [(String, String)]) async throws -> (HTTPClientResponse, [UInt8]) {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await HTTPClientTransport.sharedClient.execute(request, timeout: .seconds(60))
        return (response, Array(buffer: try await response.body.collect(upTo: 64 << 20)))
    }

    static let authorization = ("Authorization", "Basic " + Data("ada:secret".utf8).base64EncodedString())

    @Test("an answer of 1 KiB or more is gzip for a client that accepts it, deflate for one that takes only that, plain otherwise")
    func compressedAnswers() async throws {
        try await HTTPSyncServer.withRunningServer(
            service: LargeAnswerService(size: 50_000), authenticator: TransportRoute.defaultAuthenticator
        ) { baseURL in
            let expected = [UInt8](repeating: 0x61, count: 50_000)
            let (gzipped, gzipBody) = try await Self.post(
                "\(baseURL)/x", body: [], headers: [Self.authorization, ("Accept-Encoding", "br;q=1, gzip;q=0.5")])
            #expect(gzipped.headers["Content-Encoding"] == ["gzip"])
            #expect(gzipped.headers["Vary"] == ["Accept-Encoding"])
            #expect(gzipBody.count < 1_000)
            #expect(try await Self.python.output(["gunzip"], input: gzipBody) == expected)

            let (deflated, deflateBody) = try await Self.post(
                "\(baseURL)/x", body: [], headers: [Self.authorization, ("Accept-Encoding", "deflate, gzip;q=0")])
            #expect(deflated.headers["Content-Encoding"] == ["deflate"])
            #expect(try await Self.python.output(["inflate"], input: deflateBody) == expected)

            // A client that asks for nothing (the independent clients) gets the bytes as they are.
            let (plain, plainBody) = try await Self.post("\(baseURL)/x", body: [], headers: [Self.authorization])
            #expect(plain.headers["Content-Encoding"].isEmpty)
            #expect(plainBody == expected)
        }
    }

    @Test("the compression level trades CPU for bytes: level 1 answers more bytes than 9, and both decode to the answer")
    func compressionLevel() async throws {
        // Text that compresses as a page of records does: words of a small vocabulary in a random order.
        var generator = SeededGenerator(seed: 7)
        let words = ["contact", "name", "email", "phone", "street", "city", "notes", "coffee", "Tuesday", "gift"]
        let text = Array((0..<20_000).map { _ in words[Int(generator.next() % UInt64(words.count))] }.joined(separator: " ").utf8)
        var sizes: [Int: Int] = [:]
        for level in [1, 9] {
            try await HTTPSyncServer.withRunningServer(
                service: FixedAnswerService(body: text), authenticator: TransportRoute.defaultAuthenticator,
                configuration: HTTPSyncServer.Configuration(compressionLevel: level)
            ) { baseURL in
                let (response, body) = try await Self.post(
                    "\(baseURL)/x", body: [], headers: [Self.authorization, ("Accept-Encoding", "gzip")])
                #expect(response.headers["Content-Encoding"] == ["gzip"], "level \(level)")
                #expect(try await Self.python.output(["gunzip"], input: body) == text, "level \(level)")
                sizes[level] = body.count
            }
        }
        let (fastest, smallest) = (try #require(sizes[1]), try #require(sizes[9]))
        #expect(fastest > smallest)
    }

    @Test("a small answer is not compressed")
    func smallAnswer() async throws {
        try await HTTPSyncServer.withRunningServer(
            service: LargeAnswerService(size: 100), authenticator: TransportRoute.defaultAuthenticator
        ) { baseURL in
            let (response, body) = try await Self.post("\(baseURL)/x", body: [], headers: [Self.authorization, ("Accept-Encoding", "gzip")])
            #expect(response.headers["Content-Encoding"].isEmpty)
            #expect(body.count == 100)
        }
    }

    @Test("a gzip request body is decoded; an unknown coding is 415; a corrupt one 400")
    func compressedRequests() async throws {
        try await HTTPSyncServer.withRunningServer(service: EchoService(), authenticator: TransportRoute.defaultAuthenticator) { baseURL in
            let json = Array(#"{"name": "Ada Lovelace", "born": 1815}"#.utf8)
            let gzipped = try await Self.python.output(["gzip"], input: json)
            let (echoed, body) = try await Self.post(
                "\(baseURL)/echo", body: gzipped,
                headers: [Self.authorization, ("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
            #expect(echoed.status == .ok)
            #expect(try JSONCodec().decode(body)["body"]?["name"] == "Ada Lovelace")

            let (unknown, unknownBody) = try await Self.post(
                "\(baseURL)/echo", body: json, headers: [Self.authorization, ("Content-Encoding", "br")])
            #expect(unknown.status.code == 415)
            #expect(String(decoding: unknownBody, as: UTF8.self).contains("Content-Encoding 'br'"))

            let (corrupt, _) = try await Self.post(
                "\(baseURL)/echo", body: json, headers: [Self.authorization, ("Content-Encoding", "gzip")])
            #expect(corrupt.status == .badRequest)
        }
    }

    @Test("a gzip bomb — 1 MB that inflates to 1 GB — is 413, and the server's memory stays flat")
    func gzipBomb() async throws {
        let bomb = try await Self.python.output(["bomb", "1024"])
        #expect(bomb.count < 2 << 20, "the bomb is about a megabyte: \(bomb.count)")
        // `anchorage serve` in a process of its own, so that its peak memory is the server's alone.
        let tool = try AnchorageTool()
        let folder = try TemporaryFolder("gzip-bomb")
        let users = folder.path("users.txt")
        _ = try await tool.run(["users", "add", "ada", "--iterations", "1000", "--file", users], input: Array("secret\n".utf8))
        let server = try await tool.serve(
            ["--store", "memory", "--users", users, "--max-request-bytes", String(8 << 20), "--log-level", "warning"])
        let (refused, body) = try await Self.post(
            "\(server.url)/deltas", body: bomb,
            headers: [Self.authorization, ("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        #expect(refused.status.code == 413)
        #expect(String(decoding: body, as: UTF8.self).contains("payload_too_large"))
        let peak = Self.peakResidentBytes(of: server.process.pid)
        #expect(peak > 0, "the server's peak memory can be read")
        #expect(peak < 256 << 20, "the server's peak memory was \(peak >> 20) MiB")
        _ = try await server.process.terminate()
    }

    /// The peak resident memory (`VmHWM`) of process `pid`, in bytes.
    static func peakResidentBytes(of pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? 0) * 1_024
    }

    @Test("a head over the limit is 431 and a TLS handshake on the plain port 400, each closed at once; an 8 KB header is served")
    func malformedHeads() async throws {
        try await HTTPSyncServer.withRunningServer(service: EchoService(), authenticator: TransportRoute.defaultAuthenticator) { baseURL in
            let port = try #require(baseURL.port)
            let large = try await RawConnection.open(port: port)
            try await large.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 100_000))\r\n\r\n")
            let tooLarge = await large.readUntilClosed(within: .seconds(60))
            #expect(tooLarge.closed)
            #expect(tooLarge.text.hasPrefix("HTTP/1.1 431 "), "\(tooLarge.text.prefix(200))")

            let tls = try await RawConnection.open(port: port)
            // The start of a TLS 1.2 ClientHello record.
            try await tls.send([0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03] + [UInt8](repeating: 0x2A, count: 32))
            let notHTTP = await tls.readUntilClosed(within: .seconds(60))
            #expect(notHTTP.closed)
            #expect(notHTTP.text.hasPrefix("HTTP/1.1 400 "), "\(notHTTP.text.prefix(200))")

            let ordinary = try await RawConnection.open(port: port)
            try await ordinary.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 8_000))\r\n\r\n")
            #expect(await ordinary.read(until: "ok\n", within: .seconds(60)).text.hasPrefix("HTTP/1.1 200"))
            await ordinary.close()
        }
    }
}
