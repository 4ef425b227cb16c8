// SwiftPM links an executable with `main` aliased to `<Module>_main`, a symbol
// `-parse-as-library` never emits, so the link fails. Each target provides
// that symbol and hands control to libFuzzer's own driver through
// `runFuzzer`, which makes the plain
// `swift build -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`
// of scripts/fuzz.sh link and run as a normal libFuzzer binary.

/// libFuzzer's driver: parses the command line and runs `callback` on each input.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// Runs libFuzzer with the command line `argc`/`argv`, calling `testOneInput` on each input.
public func runFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ testOneInput: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt {
    var argc = argc
    var argv = argv
    return runFuzzerDriver(&argc, &argv, testOneInput)
}
