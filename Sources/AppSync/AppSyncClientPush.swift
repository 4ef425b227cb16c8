import SyncCore

/// The upload of one sync of an ``AppSyncClient``: the journal's ready changes
/// of a type, ``AppSyncClient/Configuration/updateSize`` objects an update,
/// each update's answer settled in the journal before the next goes up.
struct AppSyncClientPush {
    let client: AppSyncClient

    /// Uploads the ready changes of `type`; an upload cut short resumes with what the server has not
    /// answered (sending an object twice is harmless: the server skips it).
    func run(_ type: AppSyncObjectType, into report: inout AppSyncClient.Report) async throws {
        let name = type.name
        let (ready, counterNow) = try await client.store.transaction(for: client.account) { tx in
            (
                try await tx.journal.entries(in: [StoredObject.collection(name)]).filter(\.isReadyToSend),
                try await tx.metadata(AppSyncClientState.counter) ?? 0
            )
        }
        var start = ready.startIndex
        while start < ready.endIndex {
            let batch = ready[start..<min(start + client.configuration.updateSize, ready.endIndex)]
            start = batch.endIndex
            let settled = try await upload(batch, of: name, counterNow: counterNow)
            report.uploaded += settled.uploaded
            report.rejected.merge(settled.rejected) { _, new in new }
            report.refused.merge(settled.refused) { _, new in new }
        }
    }

    /// Sends one update of the objects `entries` name and settles its answer: taken objects leave the
    /// journal (unless changed again meanwhile), refusals are noted, and `servercounter_lastsync` moves
    /// to the answer's `servercounter` when nothing else was written on the server since it.
    private func upload(
        _ entries: ArraySlice<JournalEntry>, of name: String, counterNow: Int64
    ) async throws -> AppSyncClient.Report {
        let (store, account, endpoint) = (client.store, client.account, client.endpoint)
        let (pending, serverLastSync) = try await store.transaction(for: account) { tx in
            let records = try await tx.records(at: entries.map(\.key))
            let pending = try entries.compactMap { entry in
                try records[entry.key].map { (entry: entry, object: try StoredObject.object($0.record)) }
            }
            return (pending, try await tx.metadata(AppSyncClientState.serverCounterLastSync(name)) ?? 0)
        }
        guard !pending.isEmpty else { return AppSyncClient.Report() }
        let request = try endpoint.request(
            .post, "\(client.configuration.basePath)/\(name)/update",
            body: AppSyncMessages.UpdateRequest(objects: pending.map(\.object)))
        let result = try await endpoint.send(request, idempotent: true, as: AppSyncMessages.UpdateAnswer.self).result
        let rejections = Dictionary((result.rejected ?? []).map { ($0.guid, $0) }, uniquingKeysWith: { first, _ in first })
        return try await store.transaction(for: account) { tx in
            var settled = AppSyncClient.Report()
            try await tx.journal.prefetch(pending.map(\.entry.key))
            for (entry, object) in pending {
                guard let rejection = rejections[object.guid] else {
                    try await tx.journal.acknowledge(
                        entry.key, sequence: entry.sequence, holding: StoredObject.serverVersion(object, type: name))
                    settled.uploaded += 1
                    continue
                }
                let reason = rejection.reason ?? "refused"
                guard SyncFailureClass(status: rejection.status ?? AppSyncServer.conflictStatus) == .refused else {
                    settled.rejected[object.guid] = reason
                    continue
                }
                // Refused for good; a newer change made while this one was in flight is still sent.
                if try await tx.journal.entry(for: entry.key)?.sequence == entry.sequence {
                    try await tx.journal.remove(entry.key)
                }
                settled.refused[entry.key] = reason
            }
            try await tx.setMetadata(counterNow, AppSyncClientState.counterLastSync(name))
            if result.servercounterBefore == serverLastSync {
                try await tx.setMetadata(result.servercounter, AppSyncClientState.serverCounterLastSync(name))
            }
            return settled
        }
    }
}
