public import Foundation
public import SyncCore

/// What a file sync asks the user, and what it shows them: the seed's
/// "ask the user" with dates, sizes and what each answer does.
///
/// A question is an open conflict of the journal (collection
/// ``FolderSync/collection``, id the item's path): `anchorage conflicts list`
/// shows it, `anchorage conflicts resolve files/PATH --keep mine|theirs|both`
/// answers it, and the next sync carries the answer out.
public struct FileQuestion: Sendable, Hashable, CustomStringConvertible {
    /// Which situation of the seed's tables is asked about.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Delete: the item changed on the server since the device saw it.
        case deleteChangedOnServer = "delete-changed-on-server"
        /// Delete from the server: the item was deleted there but changed on the device.
        case deletedOnServerChangedLocally = "deleted-on-server-changed-locally"
        /// Move: the item changed on the server after the move was made.
        case moveChangedOnServer = "move-changed-on-server"
        /// Create directory: a folder of that name exists and the user added items inside.
        case folderExists = "folder-exists"
        /// Create directory: a file of that name exists.
        case fileExistsForFolder = "file-exists-for-folder"
        /// Create directory: the server would not create it.
        case folderNotCreated = "folder-not-created"
        /// Upload or download: the file changed on the server and on the device.
        case changedOnBoth = "changed-on-both"
        /// Upload: a file of that name appeared on the server, and the device never saw it.
        case existsOnServer = "exists-on-server"
        /// Upload: the folder the file goes into no longer exists on the server.
        case folderMissing = "folder-missing"
    }

    /// The situation.
    public var kind: Kind
    /// The item's path in the synced folder.
    public var path: String
    /// When the device's action happened, or the local copy was last modified.
    public var localTime: Date
    /// When the server's item was last modified (`nil`: the server has none).
    public var serverTime: Date?
    /// The local copy's size in bytes, when there is one.
    public var localSize: Int64?
    /// The server's size in bytes, when there is a file.
    public var serverSize: Int64?
    /// What each answer does, by answer name (`mine`, `theirs`, `both`, `name=NEW`).
    public var choices: [String: String]

    /// The conflict's id for `anchorage conflicts resolve`: `files/PATH`.
    public var id: String { FolderSync.collection.rawValue + "/" + path }

    /// Makes a question.
    public init(
        kind: Kind, path: String, localTime: Date, serverTime: Date?, localSize: Int64? = nil, serverSize: Int64? = nil,
        choices: [String: String]
    ) {
        self.kind = kind
        self.path = path
        self.localTime = localTime
        self.serverTime = serverTime
        self.localSize = localSize
        self.serverSize = serverSize
        self.choices = choices
    }

    /// The question in one paragraph: the situation, both dates and sizes, and the choices.
    public var description: String {
        var text = "\(path): " + Self.situation(kind)
        text += "; on this device \(HTTPDate.format(localTime))"
        if let localSize { text += ", \(localSize) bytes" }
        if let serverTime { text += "; on the server \(HTTPDate.format(serverTime))" }
        if let serverSize { text += ", \(serverSize) bytes" }
        text += ". " + choices.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        return text
    }

    static func situation(_ kind: Kind) -> String {
        switch kind {
        case .deleteChangedOnServer: "deleted here, but changed on the server since"
        case .deletedOnServerChangedLocally: "deleted on the server, but changed on this device"
        case .moveChangedOnServer: "moved here, but changed on the server after the move"
        case .folderExists: "a folder of this name already exists on the server, and items were added inside here"
        case .fileExistsForFolder: "a file of this name exists on the server; the new folder needs another name"
        case .folderNotCreated: "the server would not create this folder"
        case .changedOnBoth: "changed on this device and on the server"
        case .existsOnServer: "a file of this name appeared on the server, which this device never saw"
        case .folderMissing: "the folder it goes into no longer exists on the server"
        }
    }

    /// The question kept in an open conflict's server version.
    var fields: [String: SyncValue] {
        var fields: [String: SyncValue] = [
            "question": .string(kind.rawValue), "message": .string(description),
            "localTime": .date(localTime),
            "choices": .dictionary(choices.mapValues { .string($0) }),
        ]
        if let serverTime { fields["serverTime"] = .date(serverTime) }
        if let localSize { fields["localSize"] = .integer(localSize) }
        if let serverSize { fields["serverSize"] = .integer(serverSize) }
        return fields
    }

    /// The question an open conflict holds, or `nil` when it holds none.
    public init?(_ conflict: SyncConflict) {
        let fields = conflict.remote.fields
        guard conflict.key.collection == FolderSync.collection, case .string(let raw)? = fields["question"],
            let kind = Kind(rawValue: raw)
        else { return nil }
        var choices: [String: String] = [:]
        if case .dictionary(let stored)? = fields["choices"] {
            for (key, value) in stored { if case .string(let text) = value { choices[key] = text } }
        }
        func date(_ name: String) -> Date? { if case .date(let value)? = fields[name] { value } else { nil } }
        func int(_ name: String) -> Int64? { if case .integer(let value)? = fields[name] { value } else { nil } }
        self.init(
            kind: kind, path: conflict.key.id.rawValue, localTime: date("localTime") ?? conflict.localTime,
            serverTime: date("serverTime"), localSize: int("localSize"), serverSize: int("serverSize"), choices: choices)
    }
}

/// Something a sync tells the user without asking: a change the server
/// refused, a failure that will be retried, a full disk. Made by the sync
/// (``FolderSyncReport/notices``); an application reads it.
public struct FileNotice: Sendable, Hashable, CustomStringConvertible {
    /// The item's path.
    public var path: String
    /// What happened, one line.
    public var message: String
    /// Whether the change stays in the journal for the next sync (`false`: it was dropped).
    public var kept: Bool

    /// `path: message (kept for the next sync | dropped)`.
    public var description: String { "\(path): \(message) (\(kept ? "kept for the next sync" : "dropped"))" }
}
