import FuzzSupport
import SyncJSON

/// libFuzzer's entry point: checks the JSON decoder on one input (see `checkDecoding`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkDecoding(UnsafeBufferPointer(start: data, count: size), with: JSONCodec())
}

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with `fuzz(_:_:)`.
@_cdecl("FuzzJSON_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
