/// A typed name for a piece of sync metadata: a cursor, a counter, a
/// device's identity, kept in the store per peer.
///
/// ```swift
/// enum DeviceState {
///     static let peer: PeerID = "mystack.client"
///     static let pulledThrough = MetadataKey<ChangePosition>("pulledThrough", peer: peer)
///     static func lastSync(_ type: String) -> MetadataKey<Int64> { .init("lastsync/" + type, peer: peer) }
/// }
///
/// try await store.transaction(for: account) { tx in
///     let position = try await tx.metadata(DeviceState.pulledThrough) ?? .start
///     try await tx.setMetadata(next, DeviceState.pulledThrough)
/// }
/// ```
///
/// The value goes through ``SyncValueEncoder`` into the store's metadata, so
/// an `Int64` is stored as ``SyncValue/integer(_:)``, a `String` as a
/// ``SyncValue/string(_:)`` — as code that kept the bare value stored it. A
/// stored value that does not decode as `Value` is a ``StoreError`` with
/// code ``StoreError/Code/corrupt``.
public struct MetadataKey<Value: Codable & Sendable>: Sendable, Hashable, CustomStringConvertible {
    /// The name the value is stored under.
    public var name: String
    /// The peer the value belongs to.
    public var peer: PeerID

    /// Makes a key.
    public init(_ name: String, peer: PeerID) {
        self.name = name
        self.peer = peer
    }

    /// `peer/name`.
    public var description: String { "\(peer)/\(name)" }

    /// The value stored as `stored`, or `nil` when nothing is.
    /// - Throws: ``StoreError`` (``StoreError/Code/corrupt``) when the stored value is not a `Value`.
    public func decode(_ stored: SyncValue?) throws -> Value? {
        guard let stored else { return nil }
        do {
            return try SyncValueDecoder().decode(Value.self, from: stored)
        } catch {
            throw StoreError(.corrupt, "the metadata \(self) is not a \(Value.self): \(error)", underlying: error)
        }
    }

    /// `value` as stored, or `nil` to remove it.
    /// - Throws: ``StoreError`` (``StoreError/Code/invalidArgument``) when `value` cannot be encoded.
    public func encode(_ value: Value?) throws -> SyncValue? {
        guard let value else { return nil }
        do {
            return try SyncValueEncoder().encode(value)
        } catch {
            throw StoreError(.invalidArgument, "the metadata \(self) cannot be encoded: \(error)", underlying: error)
        }
    }
}

extension StoreTransaction {
    /// The value stored under `key`, or `nil`.
    /// - Throws: ``StoreError``, with code ``StoreError/Code/corrupt`` when the stored value is not a `Value`.
    public func metadata<Value>(_ key: MetadataKey<Value>) async throws -> Value? {
        try key.decode(try await metadata(key.name, for: key.peer))
    }

    /// Stores `value` under `key`; `nil` removes it.
    /// - Throws: ``StoreError``.
    public func setMetadata<Value>(_ value: Value?, _ key: MetadataKey<Value>) async throws {
        try await setMetadata(try key.encode(value), key.name, for: key.peer)
    }
}

extension AccountStore {
    /// The value stored under `key` for this account, read in a transaction of its own.
    /// - Throws: ``StoreError``, with code ``StoreError/Code/corrupt`` when the stored value is not a `Value`.
    public func metadata<Value>(_ key: MetadataKey<Value>) async throws -> Value? {
        try await transaction { tx in try await tx.metadata(key) }
    }

    /// Stores `value` under `key` for this account, in a transaction of its own; `nil` removes it.
    /// - Throws: ``StoreError``.
    public func setMetadata<Value>(_ value: Value?, _ key: MetadataKey<Value>) async throws {
        try await transaction { tx in try await tx.setMetadata(value, key) }
    }
}
