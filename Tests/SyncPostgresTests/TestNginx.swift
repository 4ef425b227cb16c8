import Foundation
import SyncTesting

/// nginx as a round-robin load balancer in front of several servers, started
/// for one test with `scripts/with-nginx.sh --start` (no stickiness: each
/// request goes to the next server) and stopped with ``stop()``; the script's
/// watchdog stops it if the test process dies first.
///
/// nginx is part of the test environment (`scripts/install-deps.sh --nginx`):
/// when it is missing, ``start(upstreams:)`` throws, and the test fails with
/// the script's one line saying so — it is never skipped.
final class TestNginx: Sendable {
    /// `http://127.0.0.1:PORT`, where nginx listens.
    let url: URL
    /// The folder of its configuration, pid file and logs.
    let directory: String

    private init(url: URL, directory: String) {
        self.url = url
        self.directory = directory
    }

    /// Why nginx could not be started.
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    /// The repository's `scripts/with-nginx.sh`.
    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/with-nginx.sh").path
    }

    /// Starts nginx in front of `upstreams` (each `http://HOST:PORT`).
    /// - Throws: ``StartError`` with what the script printed when nginx is missing or does not start.
    static func start(upstreams: [URL]) async throws -> TestNginx {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anchorage-nginx-\(UUID().uuidString)").path
        let addresses = upstreams.compactMap { url in url.host.flatMap { host in url.port.map { "\(host):\($0)" } } }
        let outcome = try await ChildProcess.run(
            "/bin/bash", arguments: [script, "--start", directory, String(ProcessInfo.processInfo.processIdentifier)],
            environment: ["ANCHORAGE_NGINX_UPSTREAMS": addresses.joined(separator: " ")])
        guard outcome.status == 0, let line = outcome.outputText.split(whereSeparator: \.isNewline).last, let port = Int(line)
        else {
            throw StartError(
                description: "scripts/with-nginx.sh --start failed (status \(outcome.status)): \(outcome.errorText)")
        }
        return TestNginx(url: URL(string: "http://127.0.0.1:\(port)")!, directory: directory)
    }

    /// Stops nginx and removes its folder.
    func stop() async {
        _ = try? await ChildProcess.run("/bin/bash", arguments: [Self.script, "--stop", directory])
    }

    /// How many requests whose path starts with `prefix` each server answered with `status`, by
    /// `HOST:PORT`, from the access log (a request nginx passed on after a failed connection counts
    /// for the server that answered it).
    func answers(pathPrefix prefix: String, status: Int = 200) throws -> [String: Int] {
        let log = try String(contentsOfFile: directory + "/access.log", encoding: .utf8)
        var counts: [String: Int] = [:]
        for line in log.split(whereSeparator: \.isNewline) {
            // "METHOD PATH STATUS ADDRESS[, ADDRESS…]"
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, fields[1].hasPrefix(prefix), Int(fields[2]) == status,
                let last = fields[3].split(separator: ",").last
            else { continue }
            counts[last.trimmingCharacters(in: .whitespaces), default: 0] += 1
        }
        return counts
    }
}
