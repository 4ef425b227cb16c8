import FuzzSupport
import SyncCore
import SyncMessagePack

/// libFuzzer's entry point: checks the MessagePack decoder on one input (see `checkDecoding`), and
/// reads every node of the document of an input it accepts.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let codec = MessagePackCodec()
    _ = checkDecoding(bytes, with: codec)
    if let document = try? codec.decodeDocument(Array(bytes)) {
        walk(document.root)
    }
    return 0
}

/// Reads every accessor of `node` and of everything inside it.
private func walk(_ node: SyncDocument.Node) {
    _ = (node.kind, node.stringValue, node.integerValue, node.realValue, node.dateValue, node.bytes, node.count)
    for element in node.elements ?? [] { walk(element) }
    for (key, value) in node.entries ?? [] {
        precondition(node[key] != nil, "the key \(key) of the document's entries is not found by lookup")
        walk(value)
    }
    _ = node[0]
}

/// The entry point SwiftPM's link expects for this target: runs libFuzzer with `fuzz(_:_:)`.
@_cdecl("FuzzMessagePack_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzz)
}
