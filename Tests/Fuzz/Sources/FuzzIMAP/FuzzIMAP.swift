import FuzzSupport
import SyncIMAP

/// libFuzzer's entry point: feeds one input to the IMAP response framer, in two pieces split at
/// the first byte's value, and parses every response it cuts. Framing and parsing may refuse the
/// input with an `IMAPError`, never crash; a sequence set that parses writes itself back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var framer = IMAPResponseFramer(limits: .init(maxLineBytes: 1_024, maxLiteralBytes: 2_048, maxResponseBytes: 4_096))
    let split = bytes.isEmpty ? 0 : min(bytes.count, Int(bytes[0]))
    for piece in [bytes[..<split], bytes[split...]] {
        framer.append(piece)
        while true {
            let unit: [UInt8]?
            do {
                unit = try framer.next()
            } catch {
                return 0
            }
            guard let unit else { break }
            if case .untagged(.vanished(_, let set)) = try? IMAPParser.parse(unit) {
                guard (try? IMAPSequenceSet(parsing: set.description)) == set else { fatalError("\(set) does not read back") }
            }
        }
    }
    _ = ModifiedUTF7.decode(String(decoding: bytes, as: UTF8.self))
    return 0
}

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with `fuzz(_:_:)`.
@_cdecl("FuzzIMAP_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
