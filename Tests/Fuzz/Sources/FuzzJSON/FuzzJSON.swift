import SyncCore
import SyncJSON

/// libFuzzer entry point for the JSON decoder: decoding arbitrary bytes must
/// never crash, and whatever decodes must re-encode and decode to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let codec = JSONCodec()
    guard let value = try? codec.decode(bytes) else { return 0 }
    let encoded: [UInt8]
    do { encoded = try codec.encode(value) } catch {
        fatalError("a decoded value failed to encode: \(error)")
    }
    let again: SyncValue
    do { again = try codec.decode(encoded) } catch {
        fatalError("the encoding of a decoded value failed to decode: \(error)")
    }
    precondition(again == value, "round trip changed \(value) into \(again)")
    return 0
}
