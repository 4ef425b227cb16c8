public import SyncCore

extension FolderSync {
    /// What this client's syncs are doing, for a UI: `syncStatus.states()` is the state now and each
    /// change — idle, syncing, retrying, up to date, offline, failed — with the conflicts waiting.
    public var syncStatus: SyncStatus { syncGate.status }
}

extension FolderSyncReport: ReportsWaitingConflicts {
    /// The conflicts waiting for an answer after the sync.
    public var conflictsWaiting: Int { questions.count }
}
