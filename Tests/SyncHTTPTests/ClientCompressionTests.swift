import Foundation
import SyncCore
import SyncHTTPClient
import SyncTesting
import TestSupport
import Testing

/// HTTP compression in `HTTPClientTransport`, against a Python HTTP server as the independent side:
/// it reports what arrived (`Content-Encoding`, the body as decoded by Python's gzip) and answers
/// gzip when asked.
@Suite("HTTP compression: the client")
struct ClientCompressionTests {
    /// `python3 -c SERVER MODE`: prints its port, then serves. Mode `reads-gzip` says `Accept-Encoding:
    /// gzip` in its answers; `refuses` says so too but answers a compressed body 415.
    static let server = """
        import gzip, http.server, json, sys
        mode = sys.argv[1]
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def answer(self, status, body, encoding=None):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Accept-Encoding", "gzip")
                if encoding: self.send_header("Content-Encoding", encoding)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                coding = self.headers.get("Content-Encoding")
                if coding and mode == "refuses":
                    return self.answer(415, b'{"error":"unsupported_media_type","message":"no codings"}')
                body = gzip.decompress(raw) if coding == "gzip" else raw
                report = {"encoding": coding, "wire": len(raw), "size": len(body),
                          "accept": self.headers.get("Accept-Encoding"), "text": body.decode()[:20]}
                self.answer(200, json.dumps(report).encode())
            def do_GET(self):
                body = json.dumps({"text": "x" * 50000}).encode()
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    return self.answer(200, gzip.compress(body), "gzip")
                self.answer(200, body)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    static func start(_ mode: String) async throws -> (ChildProcess.Running, URL) {
        let process = try ChildProcess.start("python3", arguments: ["-c", server, mode])
        let port = try await process.waitForOutputLine(timeout: .seconds(30)) { Int($0) }
        return (process, URL(string: "http://127.0.0.1:\(port)")!)
    }

    static let big = Array(("{\"text\": \"" + String(repeating: "Ada Lovelace ", count: 400) + "\"}").utf8)

    @Test("answers come compressed and are decoded; bodies go compressed once the server said it reads gzip")
    func compressesForAServerThatReadsGzip() async throws {
        let (process, url) = try await Self.start("reads-gzip")
        defer { Task { _ = try? await process.kill() } }
        let transport = HTTPClientTransport(baseURL: url)
        let answer = try await transport.send(SyncRequest(method: .get, path: "/big"))
        #expect(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: String] == ["text": String(repeating: "x", count: 50_000)])

        // The GET's answer said Accept-Encoding: gzip, so a large body now goes compressed.
        let sent = try await transport.send(SyncRequest(method: .post, path: "/x", contentType: "application/json", body: Self.big))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])
        #expect(report["encoding"] as? String == "gzip")
        #expect(report["size"] as? Int == Self.big.count)
        #expect((report["wire"] as? Int ?? .max) < Self.big.count / 4)
        #expect(report["accept"] as? String == "gzip, deflate")

        // A small body goes as it is.
        let small = try await transport.send(SyncRequest(method: .post, path: "/x", body: Array("{}".utf8)))
        #expect((try JSONSerialization.jsonObject(with: Data(small.body)) as? [String: Any])?["encoding"] is NSNull)
    }

    @Test("a server that answers a compressed body 415 gets it again uncompressed, and uncompressed from then on")
    func fallsBackAfterA415() async throws {
        let (process, url) = try await Self.start("refuses")
        defer { Task { _ = try? await process.kill() } }
        let transport = HTTPClientTransport(baseURL: url)
        _ = try await transport.send(SyncRequest(method: .get, path: "/big"))
        for _ in 0..<2 {
            let sent = try await transport.send(SyncRequest(method: .post, path: "/x", body: Self.big))
            #expect(sent.status == 200)
            let report = try #require(try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])
            #expect(report["encoding"] is NSNull)
            #expect(report["size"] as? Int == Self.big.count)
        }
    }

    @Test("with compression off, nothing is asked for or compressed")
    func off() async throws {
        let (process, url) = try await Self.start("reads-gzip")
        defer { Task { _ = try? await process.kill() } }
        let transport = HTTPClientTransport(
            baseURL: url, configuration: .init(acceptsCompressedAnswers: false, compressRequestsAbove: nil))
        _ = try await transport.send(SyncRequest(method: .get, path: "/big"))
        let sent = try await transport.send(SyncRequest(method: .post, path: "/x", body: Self.big))
        let report = try #require(try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])
        #expect(report["encoding"] is NSNull && report["accept"] is NSNull)
    }
}
