#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryStore: BrowsableStore {
    /// Every account that ever committed a write, sorted by name, with the position of its latest record write.
    public func accountSummaries() async throws -> [AccountSummary] {
        accounts.map { account, state in AccountSummary(account: account, lastPosition: state.latestPosition) }
            .sorted { $0.account.rawValue < $1.account.rawValue }
    }

    /// The collections of `account` that hold at least one record (tombstones count), sorted by name, counted.
    public func collectionSummaries(of account: AccountID) async throws -> [CollectionSummary] {
        guard let state = accounts[account] else { return [] }
        var summaries: [CollectionID: CollectionSummary] = [:]
        for (key, stored) in state.records {
            let isDeleted = stored.record.isDeleted
            let modifiedAt = stored.record.version.modifiedAt
            if var summary = summaries[key.collection] {
                if isDeleted { summary.deletedRecords += 1 } else { summary.liveRecords += 1 }
                summary.latestPosition = max(summary.latestPosition, stored.position)
                summary.latestModified = max(summary.latestModified, modifiedAt)
                summaries[key.collection] = summary
            } else {
                summaries[key.collection] = CollectionSummary(
                    collection: key.collection, liveRecords: isDeleted ? 0 : 1, deletedRecords: isDeleted ? 1 : 0,
                    latestPosition: stored.position, latestModified: modifiedAt)
            }
        }
        return summaries.values.sorted { $0.collection.rawValue < $1.collection.rawValue }
    }
}
