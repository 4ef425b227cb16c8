import FuzzSupport
import SyncXMLPlist

/// libFuzzer's entry point: checks the XMLPlist decoder on one input (see `checkDecoding`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkDecoding(UnsafeBufferPointer(start: data, count: size), with: XMLPlistCodec())
}

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with `fuzz(_:_:)`.
@_cdecl("FuzzXMLPlist_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
