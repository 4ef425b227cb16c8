public import SyncCore

/// One sync of an ``AppSyncClient``, type after type in name order: the
/// journal adopts what an earlier version marked by counters, the
/// application's answers to conflicts are carried out, then the download
/// (``AppSyncClientPull``) and the upload (``AppSyncClientPush``). A full sync
/// forgets both counters first and, between the two, journals the objects the
/// server did not list.
struct AppSyncClientSession {
    let client: AppSyncClient

    /// Runs the sync; `full` for ``AppSyncClient/fullSync()``.
    func run(full: Bool = false) async throws -> AppSyncClient.Report {
        if full { try await forgetCounters() }
        var report = AppSyncClient.Report()
        for type in client.types.values.sorted(by: { $0.name < $1.name }) {
            try await client.device.journalCounterMarkedChanges(type)
            try await carryOutAnswers(type)
            let listed = try await AppSyncClientPull(client: client).run(type, into: &report)
            if full { try await client.device.journalObjects(of: type, notIn: listed) }
            try await AppSyncClientPush(client: client).run(type, into: &report)
        }
        let collections = Set(client.types.keys.map(StoredObject.collection))
        report.openConflicts = try await client.store.openConflicts(for: client.account).count {
            $0.awaitsAnswer && collections.contains($0.key.collection)
        }
        return report
    }

    /// Forgets `counter_lastsync` and `servercounter_lastsync` of every type: the next download starts from nothing.
    private func forgetCounters() async throws {
        try await client.store.transaction(for: client.account) { tx in
            for name in client.types.keys {
                try await tx.setMetadata(nil, AppSyncClientState.counterLastSync(name))
                try await tx.setMetadata(nil, AppSyncClientState.serverCounterLastSync(name))
            }
        }
    }

    /// Carries out the answers the application gave to conflicts of `type`.
    private func carryOutAnswers(_ type: AppSyncObjectType) async throws {
        let collection = StoredObject.collection(type.name)
        let time = client.configuration.clock.now()
        _ = try await client.store.carryOutAnswers(for: client.account) { $0.key.collection == collection } writer: { _ in
            AppSyncClient.ConflictWriting(type: type, time: time, downloaded: nil)
        }
    }
}

extension AppSyncClient {
    /// What one sync did.
    public struct Report: Sendable, Hashable {
        /// Server versions written locally.
        public var downloaded = 0
        /// Objects sent to the server and taken by it.
        public var uploaded = 0
        /// Conflicts handed to the policy (same guid or same primary key).
        public var conflicts = 0
        /// Objects the server rejected because a different object holds their
        /// primary key, by guid, with its reasons: conflicts, whose changes stay
        /// in the journal until the next download settles them.
        public var rejected: [String: String] = [:]
        /// Changes the server refused for good (status 422), by key
        /// (collection `appsync/<type>`, id the guid), with its reasons: they
        /// left the journal and are not sent again; the local object stays as written.
        public var refused: [RecordKey: String] = [:]
        /// Conflicts waiting for the application's answer after the sync
        /// (``SyncCore/SyncStore/openConflicts(for:)``).
        public var openConflicts = 0

        /// An empty report.
        public init() {}
    }
}
