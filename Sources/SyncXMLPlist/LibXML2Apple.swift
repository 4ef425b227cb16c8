#if !canImport(CAnchorageXML2)
// Apple's SDKs carry libxml2 as the Clang module `libxml2`; Linux reaches the system library through
// CAnchorageXML2, whose C shim gives Swift what libxml2 spells as macros. These are the same, in Swift.
internal import libxml2

/// `XML_SAX2_MAGIC`, the marker of a SAX2 handler.
func CAnchorageXML2_sax2Magic() -> UInt32 { UInt32(XML_SAX2_MAGIC) }

/// The calling thread's structured error handler (`xmlStructuredError`, a per-thread macro).
func CAnchorageXML2_structuredErrorHandler() -> xmlStructuredErrorFunc? { __xmlStructuredError().pointee }

/// The context passed to the calling thread's structured error handler.
func CAnchorageXML2_structuredErrorContext() -> UnsafeMutableRawPointer? { __xmlStructuredErrorContext().pointee }
#endif
