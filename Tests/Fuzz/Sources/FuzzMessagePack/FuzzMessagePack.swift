import FuzzSupport
import SyncMessagePack

/// libFuzzer's entry point: checks the MessagePack decoder on one input (see `checkDecoding`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    checkDecoding(UnsafeBufferPointer(start: data, count: size), with: MessagePackCodec())
}

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with `fuzz(_:_:)`.
@_cdecl("FuzzMessagePack_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
