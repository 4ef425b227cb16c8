public import SyncCore

/// The check every decoder's fuzz target runs on one input: decoding arbitrary
/// bytes must never crash; whatever decodes must re-encode and decode to the
/// same value (reals compared bit for bit, so NaN counts as itself); and
/// encoding that value again must give the same bytes.
///
/// - Returns: 0, as libFuzzer expects; a broken property stops the process.
public func checkDecoding(_ bytes: UnsafeBufferPointer<UInt8>, with codec: some SyncCodec) -> CInt {
    guard let value = try? codec.decode(Array(bytes)) else { return 0 }
    let encoded: [UInt8]
    do { encoded = try codec.encode(value) } catch {
        fatalError("a decoded value failed to encode: \(error)")
    }
    let again: SyncValue
    do { again = try codec.decode(encoded) } catch {
        fatalError("the encoding of a decoded value failed to decode: \(error)")
    }
    precondition(identical(again, value), "round trip changed \(value) into \(again)")
    let reencoded: [UInt8]
    do { reencoded = try codec.encode(again) } catch {
        fatalError("a decoded value failed to encode the second time: \(error)")
    }
    precondition(reencoded == encoded, "encoding \(again) is not deterministic")
    return 0
}

/// Whether two values are equal with reals compared bit for bit.
private func identical(_ lhs: SyncValue, _ rhs: SyncValue) -> Bool {
    switch (lhs, rhs) {
    case (.real(let left), .real(let right)): return left.bitPattern == right.bitPattern
    case (.array(let left), .array(let right)):
        return left.count == right.count && zip(left, right).allSatisfy { identical($0, $1) }
    case (.dictionary(let left), .dictionary(let right)):
        return left.count == right.count
            && left.allSatisfy { key, value in right[key].map { identical(value, $0) } ?? false }
    default: return lhs == rhs
    }
}
