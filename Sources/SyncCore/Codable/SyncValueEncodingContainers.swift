/// The keyed container of ``SyncValueEncoding``: writes into a ``KeyedNode``.
struct SyncKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: SyncValueEncoding
    let node: KeyedNode
    let codingPath: [any CodingKey]

    private func set(_ value: SyncValue, _ key: Key) { node.set(value, for: key.stringValue) }

    /// Writes what the nil strategy makes of a missing value.
    private func setNil(_ key: Key) {
        if encoder.options.nilEncodingStrategy == .null { set(.null, key) }
    }

    mutating func encodeNil(forKey key: Key) throws { setNil(key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { set(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { set(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { set(.real(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { set(.real(Double(value)), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { set(.integer(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { set(.integer(exactly: value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { set(.integer(Int64(value)), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { set(.integer(exactly: value), key) }

    mutating func encode(_ value: Int128, forKey key: Key) throws {
        set(try SyncValueEncoding.integer(value, at: codingPath + [key]), key)
    }

    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        set(try SyncValueEncoding.integer(value, at: codingPath + [key]), key)
    }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        set(try encoder.encodeNested(value, at: codingPath + [key]) ?? .dictionary([:]), key)
    }

    // `encodeIfPresent` is spelled out so that the `.null` strategy writes a null.

    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: Int128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent(_ value: UInt128?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }
    mutating func encodeIfPresent<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { setNil(key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child: KeyedNode
        if case .keyed(let existing)? = node.pending[key.stringValue] {
            child = existing
        } else {
            child = KeyedNode()
            node.setPending(.keyed(child), for: key.stringValue)
        }
        return KeyedEncodingContainer(
            SyncKeyedEncodingContainer<NestedKey>(encoder: encoder, node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child: UnkeyedNode
        if case .unkeyed(let existing)? = node.pending[key.stringValue] {
            child = existing
        } else {
            child = UnkeyedNode()
            node.setPending(.unkeyed(child), for: key.stringValue)
        }
        return SyncUnkeyedEncodingContainer(encoder: encoder, node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let superEncoder = encoder.makeSuperEncoder(at: codingPath + [SyncCodingKey.super])
        node.setPending(.encoder(superEncoder), for: SyncCodingKey.super.stringValue)
        return superEncoder
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let superEncoder = encoder.makeSuperEncoder(at: codingPath + [key])
        node.setPending(.encoder(superEncoder), for: key.stringValue)
        return superEncoder
    }
}

/// The unkeyed container of ``SyncValueEncoding``: appends to an ``UnkeyedNode``.
struct SyncUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: SyncValueEncoding
    let node: UnkeyedNode
    let codingPath: [any CodingKey]

    var count: Int { node.count }

    private var nextPath: [any CodingKey] { codingPath + [SyncCodingKey.index(node.count)] }

    mutating func encodeNil() throws { node.append(.null) }
    mutating func encode(_ value: Bool) throws { node.append(.bool(value)) }
    mutating func encode(_ value: String) throws { node.append(.string(value)) }
    mutating func encode(_ value: Double) throws { node.append(.real(value)) }
    mutating func encode(_ value: Float) throws { node.append(.real(Double(value))) }
    mutating func encode(_ value: Int) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.append(.integer(value)) }
    mutating func encode(_ value: Int128) throws { node.append(try SyncValueEncoding.integer(value, at: nextPath)) }
    mutating func encode(_ value: UInt) throws { node.append(.integer(exactly: value)) }
    mutating func encode(_ value: UInt8) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { node.append(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { node.append(.integer(exactly: value)) }
    mutating func encode(_ value: UInt128) throws { node.append(try SyncValueEncoding.integer(value, at: nextPath)) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        node.append(try encoder.encodeNested(value, at: nextPath) ?? .dictionary([:]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = KeyedNode()
        node.appendPending(.keyed(child))
        return KeyedEncodingContainer(
            SyncKeyedEncodingContainer<NestedKey>(encoder: encoder, node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = UnkeyedNode()
        node.appendPending(.unkeyed(child))
        return SyncUnkeyedEncodingContainer(encoder: encoder, node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let superEncoder = encoder.makeSuperEncoder(at: nextPath)
        node.appendPending(.encoder(superEncoder))
        return superEncoder
    }
}

/// The single-value container of ``SyncValueEncoding``: sets the encoder's value.
struct SyncSingleValueEncodingContainer: SingleValueEncodingContainer {
    let encoder: SyncValueEncoding

    var codingPath: [any CodingKey] { encoder.codingPath }

    private func set(_ value: SyncValue) { encoder.storage = .single(value) }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.real(value)) }
    mutating func encode(_ value: Float) throws { set(.real(Double(value))) }
    mutating func encode(_ value: Int) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int8) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int16) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int32) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: Int64) throws { set(.integer(value)) }
    mutating func encode(_ value: Int128) throws { set(try SyncValueEncoding.integer(value, at: codingPath)) }
    mutating func encode(_ value: UInt) throws { set(.integer(exactly: value)) }
    mutating func encode(_ value: UInt8) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt16) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt32) throws { set(.integer(Int64(value))) }
    mutating func encode(_ value: UInt64) throws { set(.integer(exactly: value)) }
    mutating func encode(_ value: UInt128) throws { set(try SyncValueEncoding.integer(value, at: codingPath)) }

    mutating func encode<Value: Encodable>(_ value: Value) throws {
        set(try encoder.encodeNested(value, at: nil) ?? .dictionary([:]))
    }
}
