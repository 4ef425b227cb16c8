// incremental-sync: what a sync of 10 edits costs after 1,000 records and after 100,000, in every stack
// (Aquasync, appSync, OTA), for the device that wrote them and for another device that reads them. Not a
// timed test: run it by hand,
//
//     swift run -c release incremental-sync [--small 1000] [--large 100000] [--rounds 7]
//
// and write the table into docs/performance.md with the machine and date. For each stack and size: a server
// (SQLite, in this process, reached through `LoopbackTransport`: the requests and answers are encoded and
// decoded as over HTTP, without the socket) and two SQLite devices; the writer saves the records and syncs,
// the reader syncs them in; then `--rounds` times the writer edits 10 random records and syncs (timed), and
// the reader syncs (timed). The figure is the median round; the first round, right after the fill, is shown apart. AquasyncRowCountTests, AppSyncRowCountTests and
// OTARowCountTests show what those syncs read; this shows what they take.
import AppSync
import Aquasync
import Foundation
import OTASync
import SyncCore
import SyncJSON
import SyncSQLite

@main
struct IncrementalSync {
    static func main() async {
        let arguments = CommandLine.arguments
        func value(_ name: String, _ fallback: Int) -> Int {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil } ?? fallback
        }
        let sizes = [value("--small", 1_000), value("--large", 100_000)]
        let rounds = max(1, value("--rounds", 7))
        print("incremental-sync: \(ProcessInfo.processInfo.processorCount) cores, 10 edits, median of \(rounds) rounds, SQLite server and devices")
        print("")
        print("| stack | side | after \(sizes[0]) records, ms | after \(sizes[1]) records, ms | ratio | first round after the fill, ms |")
        print("|---|---|---:|---:|---:|---:|")
        do {
            for stack in Stack.allCases {
                var medians: [[Double]] = []
                for size in sizes { medians.append(try await stack.measure(records: size, rounds: rounds)) }
                for (index, side) in ["writer", "reader"].enumerated() {
                    let (small, large) = (medians[0][index], medians[1][index])
                    let first = "\(format(medians[0][index + 2])) / \(format(medians[1][index + 2]))"
                    print("| \(stack.rawValue) | \(side) | \(format(small)) | \(format(large)) | \(String(format: "%.2f", large / small))× | \(first) |")
                }
            }
        } catch {
            FileHandle.standardError.write(Data("incremental-sync: \(error)\n".utf8))
            exit(1)
        }
    }

    static func format(_ milliseconds: Double) -> String { String(format: "%.2f", milliseconds) }
}

/// The stacks measured.
enum Stack: String, CaseIterable {
    case aquasync = "Aquasync"
    case appSync = "appSync"
    case ota = "OTA"

    static let edits = 10

    /// The median writer's and reader's sync times (milliseconds) of `rounds` rounds after `records` records,
    /// then the writer's and the reader's first round.
    func measure(records: Int, rounds: Int) async throws -> [Double] {
        let folder = NSTemporaryDirectory() + "incremental-sync-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func store(_ name: String) throws -> SQLiteStore { try SQLiteStore(path: folder + "/" + name + ".sqlite") }
        let authenticator = SingleAccountAuthenticator(account: "ada")
        var writerTimes: [Double] = []
        var readerTimes: [Double] = []
        func timed(_ body: () async throws -> Void) async throws -> Double {
            let start = ContinuousClock.now
            try await body()
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
        }

        switch self {
        case .aquasync:
            let service = ServiceRouter().mounting(AquasyncServer(store: try store("server"), codecs: CodecSet([JSONCodec()])), at: "/deltas")
            let transport = LoopbackTransport(service: service, authenticator: authenticator)
            let writer = AquasyncClient(store: try store("writer"), transport: transport, codec: JSONCodec())
            let reader = AquasyncClient(store: try store("reader"), transport: transport, codec: JSONCodec())
            let gids = try await writer.records.save(
                "Contact", (0..<records).map { (gid: nil, fields: ["name": .string("contact \($0)"), "n": .integer(Int64($0))]) })
            _ = try await writer.sync()
            _ = try await reader.sync()
            for _ in 0..<rounds {
                for gid in gids.shuffled().prefix(Self.edits) { _ = try await writer.save("Contact", gid: gid, fields: ["name": "edited", "n": 0]) }
                writerTimes.append(try await timed { _ = try await writer.sync() })
                readerTimes.append(try await timed { _ = try await reader.sync() })
            }
        case .appSync:
            let type = AppSyncObjectType("contact")
            let service = ServiceRouter().mounting(AppSyncServer(store: try store("server"), codecs: CodecSet([JSONCodec()]), types: [type]), at: "/rest")
            let transport = LoopbackTransport(service: service, authenticator: authenticator)
            let writer = AppSyncClient(store: try store("writer"), transport: transport, codec: JSONCodec(), types: [type])
            let reader = AppSyncClient(store: try store("reader"), transport: transport, codec: JSONCodec(), types: [type])
            let guids = try await writer.save(
                "contact", (0..<records).map { (guid: nil, fields: ["pk": .integer(Int64($0)), "name": .string("contact \($0)")]) })
            _ = try await writer.sync()
            _ = try await reader.sync()
            for round in 0..<rounds {
                for (index, guid) in guids.enumerated().shuffled().prefix(Self.edits) {
                    try await writer.save("contact", guid: guid, fields: ["pk": .integer(Int64(index)), "name": .string("edited \(round)")])
                }
                writerTimes.append(try await timed { _ = try await writer.sync() })
                readerTimes.append(try await timed { _ = try await reader.sync() })
            }
        case .ota:
            let dataclass = "com.apple.Contacts"
            let entity = "com.apple.contacts.Contact"
            let server = OTAServer(store: try store("server"), codecs: CodecSet([JSONCodec()]), dataclasses: [dataclass])
            let transport = LoopbackTransport(service: ServiceRouter().mounting(server, at: "/ota"), authenticator: authenticator)
            func device(_ id: String) throws -> (OTADeviceRecords, OTAClient) {
                let records = OTADeviceRecords(store: try store(id), account: "ada")
                return (records, OTAClient(records: records, deviceID: id, transport: transport, codec: JSONCodec(), dataclasses: [dataclass]))
            }
            let (writerRecords, writer) = try device("writer")
            let (_, reader) = try device("reader")
            let luids = try await writerRecords.save(
                dataclass: dataclass,
                (0..<records).map { (luid: nil, entity: entity, fields: ["name": .string("contact \($0)"), "n": .integer(Int64($0))]) })
            _ = try await writer.sync()
            _ = try await reader.sync()
            _ = try await writer.sync()  // the writer's id map goes with its next sync
            _ = try await reader.sync()
            for round in 0..<rounds {
                for luid in luids.shuffled().prefix(Self.edits) {
                    _ = try await writerRecords.save(dataclass: dataclass, luid: luid, entity: entity, fields: ["name": .string("edited \(round)"), "n": 0])
                }
                writerTimes.append(try await timed { _ = try await writer.sync() })
                readerTimes.append(try await timed { _ = try await reader.sync() })
            }
        }
        return [median(writerTimes), median(readerTimes), writerTimes[0], readerTimes[0]]
    }

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
