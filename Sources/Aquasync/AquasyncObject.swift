public import SyncCore

/// A record as the application sees it on a device: its own fields plus the
/// sync columns the client keeps for it.
public struct AquasyncObject: Sendable, Hashable {
    /// The model the record belongs to.
    public var model: String
    /// The record's global id.
    public var gid: String
    /// The application's fields.
    public var fields: [String: SyncValue]
    /// Whether the record is soft-deleted.
    public var isDeleted: Bool
    /// Whether a local change waits to be pushed: the record's entry in the
    /// device's journal is pending (also while it waits for a conflict's answer).
    public var isDirty: Bool
    /// When the version was made, in milliseconds since 1970.
    public var localTimestamp: Int64
    /// The device that made the version.
    public var deviceToken: String

    /// Makes an object.
    public init(
        model: String, gid: String, fields: [String: SyncValue], isDeleted: Bool, isDirty: Bool,
        localTimestamp: Int64, deviceToken: String
    ) {
        self.model = model
        self.gid = gid
        self.fields = fields
        self.isDeleted = isDeleted
        self.isDirty = isDirty
        self.localTimestamp = localTimestamp
        self.deviceToken = deviceToken
    }
}
