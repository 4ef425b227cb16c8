import SyncCore
import SyncJSON

/// libFuzzer entry point for the JSON decoder: decoding arbitrary bytes must
/// never crash, whatever decodes must re-encode and decode to the same value,
/// and encoding that value again must give the same bytes.
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
    let reencoded: [UInt8]
    do { reencoded = try codec.encode(again) } catch {
        fatalError("a decoded value failed to encode the second time: \(error)")
    }
    precondition(reencoded == encoded, "encoding \(again) is not deterministic")
    return 0
}

// SwiftPM links an executable with `main` aliased to `<Module>_main`, a symbol
// `-parse-as-library` never emits, so the link fails. Providing that symbol
// and handing control to libFuzzer's own driver makes the plain
// `swift build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`
// of scripts/fuzz.sh link and run as a normal libFuzzer binary.

/// libFuzzer's driver: parses the command line and runs `callback` on each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with ``fuzz(_:_:)``.
@_cdecl("FuzzJSON_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv, fuzz)
}
