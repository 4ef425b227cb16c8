import ArgumentParser
import Foundation
import SyncCore

/// The OTA dataclasses `anchorage` uses unless told otherwise.
enum OTADefaults {
    /// What `anchorage serve` offers and `anchorage sync --stack ota` syncs by default.
    static let dataclasses = ["com.apple.Contacts", "com.apple.Calendars", "com.apple.Bookmarks"]
    /// What `anchorage records --stack ota` reads and edits by default.
    static let dataclass = "com.apple.Contacts"
}

/// What `anchorage` keeps in a device's local store for OTA, apart from the
/// OTA records and sync state: the device id it made on first use, and the
/// account the store was last used with.
///
/// Both are metadata of the local account `device` for the peer
/// `anchorage-cli` (keys `ota.device-id` and `ota.account`), so every sync of
/// one store presents the same device to the server, and `anchorage records
/// --stack ota` finds the account without `--user` once the store has seen one.
enum OTADeviceSettings {
    /// The local account the settings live under.
    static let account: AccountID = "device"
    /// The peer the settings are kept for.
    static let peer = PeerID("anchorage-cli")
    /// The key of the device id.
    static let deviceIDKey = "ota.device-id"
    /// The key of the account last used.
    static let accountKey = "ota.account"

    /// The device id kept in `store`; the first call makes one and keeps it.
    static func deviceID(in store: any SyncStore) async throws -> String {
        try await store.transaction(for: account) { tx in
            if let kept = try await tx.metadata(deviceIDKey, for: peer)?.stringValue { return kept }
            let made = "anchorage-" + UUID().uuidString.lowercased()
            try await tx.setMetadata(.string(made), deviceIDKey, for: peer)
            return made
        }
    }

    /// The OTA account to use: `given`, which `store` then keeps as the one
    /// last used, or else the one `store` kept.
    /// - Throws: `ValidationError` when `given` is `nil` and `store` kept none.
    static func account(_ given: String?, in store: any SyncStore) async throws -> AccountID {
        if given?.isEmpty == true { throw ValidationError("--user must not be empty") }
        let kept: String? = try await store.transaction(for: account) { tx in
            if let given {
                try await tx.setMetadata(.string(given), accountKey, for: peer)
                return given
            }
            return try await tx.metadata(accountKey, for: peer)?.stringValue
        }
        guard let kept, !kept.isEmpty else {
            throw ValidationError("name the account with --user (this store has not been used with one for OTA yet)")
        }
        return AccountID(kept)
    }
}
