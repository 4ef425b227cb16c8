import Foundation
import OTASync
import Synchronization
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("OTA under transport faults")
struct OTAFaultTests {
    /// What one device wrote: its own records by name (each device edits only its own, so the
    /// final state is known exactly), and the values it gave the one record all devices edit.
    struct Model {
        var own: [String: [String: SyncValue]] = [:]
        var luids: [String: String] = [:]
        var sharedValues: Set<SyncValue> = []
    }

    @Test("three devices making random edits for 200 rounds through drops, duplicates, reorders and cuts converge; nothing lost or duplicated")
    func threeDevicesConverge() async throws {
        let harness = OTAHarness(maxMessageBytes: 16 * 1024)
        let faultsOn = Mutex(true)
        let faults = FaultInjectingMiddleware(
            plan: .random(seed: 7, probability: 0.2, faults: [.drop, .duplicate, .reorder, .cutAfterProcessing]),
            appliesTo: { _ in faultsOn.withLock { $0 } })
        let devices = (0..<3).map { index in
            harness.device(
                "device-\(index)", codec: TestCodec.allCases[index % TestCodec.allCases.count],
                through: harness.loopback.with(faults), maxMessageBytes: 16 * 1024, retries: 1,
                itemType: index == 1 ? .changes : .records)
        }
        // A request held for reordering waits for a later one; at the end of a round there may be none.
        let releaser = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(20))
                faults.releaseHeldRequests()
            }
        }
        defer { releaser.cancel() }

        faultsOn.withLock { $0 = false }
        try await devices[0].add(["name": "shared", "value": 0])
        for device in devices { try await device.sync() }
        faultsOn.withLock { $0 = true }

        var models = [Model](repeating: Model(), count: 3)
        var random = SeededGenerator(seed: 2026)
        var failedSyncs = 0
        for round in 0..<200 {
            for (index, device) in devices.enumerated() {
                try await Self.edit(device, model: &models[index], device: index, round: round, using: &random)
            }
            failedSyncs += await withTaskGroup(of: Int.self) { group in
                for device in devices {
                    group.addTask { (try? await device.sync()) == nil ? 1 : 0 }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(faults.counts.faults > 100)
        #expect(failedSyncs > 0)

        faultsOn.withLock { $0 = false }
        for _ in 0..<2 {
            for device in devices { try await device.sync() }
        }

        let server = sorted(try await harness.serverRecords(Dataclass.contacts))
        for device in devices {
            #expect(try await device.contents() == server)
        }
        let expectedOwn = models.flatMap(\.own).map { OTARecord(entity: Dataclass.contact, fields: $0.value) }
        let serverOwn = server.filter { $0.fields["name"] != "shared" }
        #expect(serverOwn == sorted(expectedOwn))
        let shared = server.filter { $0.fields["name"] == "shared" }
        #expect(shared.count == 1)
        let written = models.reduce(into: Set<SyncValue>([0])) { $0.formUnion($1.sharedValues) }
        #expect(shared.first.map { written.contains($0.fields["value"] ?? .null) } == true)
    }

    /// One to three random edits: add, change or delete one of the device's own records, or change the shared one.
    static func edit(
        _ device: Device, model: inout Model, device index: Int, round: Int, using random: inout SeededGenerator
    ) async throws {
        for step in 0..<Int.random(in: 1...3, using: &random) {
            let choice = Int.random(in: 0..<10, using: &random)
            if choice < 4 || model.own.isEmpty {
                let name = "d\(index)-r\(round)-\(step)"
                let fields: [String: SyncValue] = ["name": .string(name), "value": .integer(Int64(round))]
                model.luids[name] = try await device.add(fields)
                model.own[name] = fields
            } else if choice < 7 {
                let name = model.own.keys.sorted()[Int.random(in: 0..<model.own.count, using: &random)]
                let fields: [String: SyncValue] = ["name": .string(name), "value": .integer(Int64(round * 10 + step))]
                try await device.records.save(dataclass: Dataclass.contacts, luid: model.luids[name], entity: Dataclass.contact, fields: fields)
                model.own[name] = fields
            } else if choice < 9 {
                let name = model.own.keys.sorted()[Int.random(in: 0..<model.own.count, using: &random)]
                try await device.records.delete(dataclass: Dataclass.contacts, luid: model.luids[name]!)
                model.own[name] = nil
            } else {
                let records = try await device.records.records(dataclass: Dataclass.contacts)
                guard let luid = records.first(where: { $0.value.fields["name"] == "shared" })?.key else { continue }
                let value = SyncValue.integer(Int64(1_000 * (index + 1) + round))
                try await device.records.save(
                    dataclass: Dataclass.contacts, luid: luid, entity: Dataclass.contact, fields: ["name": "shared", "value": value])
                model.sharedValues.insert(value)
            }
        }
    }
}
