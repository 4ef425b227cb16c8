#if !canImport(CAnchorageXML2)
// Apple's SDKs carry libxml2 as the Clang module `libxml2`; Linux reaches the system library through
// CAnchorageXML2, whose C shim calls `xmlFree` (a global function pointer) for Swift. This is the same.
internal import libxml2

/// Frees memory libxml2 allocated.
func CAnchorageXML2_free(_ pointer: UnsafeMutableRawPointer?) { xmlFree(pointer) }
#endif
