public import SyncCore

extension AppSyncClient {
    /// What this client's syncs are doing, for a UI: `syncStatus.states()` is the state now and each
    /// change — idle, syncing, retrying, up to date, offline, failed — with the conflicts waiting.
    public nonisolated var syncStatus: SyncStatus { syncGate.status }
}

extension AppSyncClient.Report: ReportsWaitingConflicts {
    /// The conflicts waiting for an answer after the sync.
    public var conflictsWaiting: Int { openConflicts }
}
