import Foundation
import OTASync
import SyncCore
import SyncTesting
import TestSupport
import Testing

@Suite("OTA over real HTTP on a loopback port")
struct OTAHTTPTests {
    /// Over HTTP only: the longest test of the suite, it is not run in process as well.
    @Test(
        "a slow sync of 10,000 records under a 256 KB message limit converges; the next fast sync sends only the changes",
        // Slow: 10,000 records over HTTP take 25 to 50 seconds in a debug build, so the test runs only when
        // ANCHORAGE_SLOW_TESTS asks for it (scripts/test.sh and CI do).
        .enabled(if: SlowTests.enabled, "slow: a 10,000-record slow sync over HTTP (25 to 50 seconds); \(SlowTests.howToRun)"))
    func slowSyncOfTenThousandRecords() async throws {
        let limit = 256 * 1024
        let harness = OTAHarness(maxMessageBytes: limit)
        try await harness.withTransport(.http) { transport in
            let sizes = SizeRecorder()
            let phoneStore = MemoryStore()
            let phone = harness.device(
                "phone", codec: .binaryPlist, through: transport.with(sizes), store: phoneStore, maxMessageBytes: limit)
            let records = OTADeviceRecords(store: phoneStore, account: harness.account)
            try await phoneStore.transaction(for: harness.account) { tx in
                for index in 0..<10_000 {
                    try await tx.put(
                        SyncRecord(
                            collection: CollectionID(Dataclass.contacts), id: RecordID("L\(index)"),
                            fields: OTARecord(
                                entity: Dataclass.contact,
                                fields: ["first name": .string("Person \(index)"), "notes": .string(String(repeating: "n", count: index % 200))]
                            ).storedFields,
                            isDeleted: false, version: RecordVersion(modifiedAt: Date(timeIntervalSince1970: 1_700_000_000), node: OTADeviceRecords.localNode)))
                }
            }
            let first = try await phone.sync()
            #expect(first.modes[Dataclass.contacts] == .slow)
            #expect(first.sentItems == 10_000)
            #expect(first.roundTrips > 1)
            #expect(try await harness.serverRecords(Dataclass.contacts).count == 10_000)

            let laptop = harness.device("laptop", codec: .xmlPlist, through: transport.with(sizes), maxMessageBytes: limit)
            let received = try await laptop.sync()
            #expect(received.receivedItems == 10_000)
            #expect(try await laptop.contents() == phone.contents())
            #expect(sizes.largestRequest <= limit)
            #expect(sizes.largestAnswer <= limit)

            try await records.save(dataclass: Dataclass.contacts, luid: "L7", entity: Dataclass.contact, fields: ["first name": "Seven"])
            try await records.delete(dataclass: Dataclass.contacts, luid: "L8")
            let fast = try await phone.sync()
            #expect(fast.modes[Dataclass.contacts] == .fast)
            #expect(fast.sentItems == 2)
            #expect(fast.roundTrips == 1)
            let laptopFast = try await laptop.sync()
            #expect(laptopFast.receivedItems == 2)
            #expect(try await laptop.contents() == phone.contents())
            #expect(try await laptop.contents().count == 9_999)
        }
    }
}
