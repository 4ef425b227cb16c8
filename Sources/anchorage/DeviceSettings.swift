import Foundation
import SyncCore

/// The OTA dataclasses `anchorage` uses unless told otherwise.
enum OTADefaults {
    /// What `anchorage serve` offers and `anchorage sync --stack ota` syncs by default.
    static let dataclasses = ["com.apple.Contacts", "com.apple.Calendars", "com.apple.Bookmarks"]
    /// What `anchorage records --stack ota` reads and edits by default.
    static let dataclass = "com.apple.Contacts"
}

/// What `anchorage` keeps in a device's local store apart from the records
/// and their sync state: the OTA device id it made on first use, and, per
/// stack, the account the store was last used with.
///
/// They are metadata of the local account `device` for the peer
/// `anchorage-cli`: the device id under `ota.device-id`, the accounts under
/// `aquasync.account`, `appsync.account` and `ota.account`. So every OTA sync
/// of one store presents the same device to the server, and once a store has
/// been used with `--user`, `anchorage sync` (and `anchorage records --stack
/// ota`) find the account without it.
enum DeviceSettings {
    /// The local account the settings live under.
    static let account: AccountID = "device"
    /// The peer the settings are kept for.
    static let peer = PeerID("anchorage-cli")
    /// The key of the OTA device id.
    static let deviceIDKey = "ota.device-id"

    /// The key of the account `stack` (`aquasync`, `appsync` or `ota`) was last used with.
    static func accountKey(_ stack: String) -> String { stack + ".account" }

    /// The OTA device id kept in `store`; the first call makes one and keeps it.
    static func deviceID(in store: any SyncStore) async throws -> String {
        try await store.transaction(for: account) { tx in
            if let kept = try await tx.metadata(deviceIDKey, for: peer)?.stringValue { return kept }
            let made = "anchorage-" + UUID().uuidString.lowercased()
            try await tx.setMetadata(.string(made), deviceIDKey, for: peer)
            return made
        }
    }

    /// The account to use for `stack`: `given`, which `store` then keeps as
    /// the one last used, or else the one `store` kept; `nil` when there is neither.
    /// - Throws: exit status 64 when `given` is empty.
    static func account(_ given: String?, stack: String, in store: any SyncStore) async throws -> AccountID? {
        if given?.isEmpty == true { throw failure("--user must not be empty", code: 64) }
        let kept: String? = try await store.transaction(for: account) { tx in
            if let given {
                try await tx.setMetadata(.string(given), accountKey(stack), for: peer)
                return given
            }
            return try await tx.metadata(accountKey(stack), for: peer)?.stringValue
        }
        guard let kept, !kept.isEmpty else { return nil }
        return AccountID(kept)
    }

    /// ``account(_:stack:in:)`` for OTA, whose records are kept per account.
    /// - Throws: exit status 64, with one line naming `--user`, when the store kept no account.
    static func otaAccount(_ given: String?, in store: any SyncStore) async throws -> AccountID {
        guard let account = try await account(given, stack: "ota", in: store) else {
            throw failure("name the account with --user (this store has not been used with one for OTA yet)", code: 64)
        }
        return account
    }
}
