#if canImport(CAnchorageXML2)
internal import CAnchorageXML2
#else
internal import libxml2
#endif
import SyncCore

/// Runs libxml2's SAX2 parser over a document and feeds a ``PlistTreeBuilder``.
///
/// Security: the parser never touches the network (`XML_PARSE_NONET`), never
/// loads a DTD and never substitutes entities. A document that declares an
/// entity or refers to one other than the five predefined ones (`&lt;` …) is
/// refused, so external entities (XXE) and entity expansion ("billion laughs")
/// cannot happen. `XML_PARSE_HUGE` lifts libxml2's own fixed caps (a nesting
/// depth of 256 elements, 10 MB text runs) because the codec enforces the
/// caller's ``CodecLimits`` itself and checks the input size before parsing.
enum XMLPlistSAXParser {
    /// Parses `bytes` into a value.
    /// - Throws: ``CodecError``.
    static func parse(_ bytes: [UInt8], limits: CodecLimits) throws(CodecError) -> SyncValue {
        guard !bytes.isEmpty else { throw .malformedInput("the input is empty", offset: 0) }
        guard bytes.count <= Int(Int32.max) else {
            throw .limitExceeded("libxml2 reads at most \(Int32.max) bytes; the input has \(bytes.count)")
        }
        _ = libxml2Initialized
        let run = ParseRun(limits: limits)
        let status = bytes.withUnsafeBytes { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in run.parse(chars) }
        }
        if let failure = run.failure ?? run.builder.failure { throw failure }
        guard status == 0, let value = run.builder.result else {
            throw .malformedInput("the document ended before </plist>", offset: bytes.count)
        }
        return value
    }

    /// The options the parser runs with (see the type's documentation).
    static let options = Int32(
        bitPattern: XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
            | XML_PARSE_HUGE.rawValue)

    /// A SAX2 handler whose callbacks find their ``ParseRun`` in the parser context's `_private`.
    static func makeHandler() -> xmlSAXHandler {
        var handler = xmlSAXHandler()
        handler.initialized = CAnchorageXML2_sax2Magic()
        handler.startElementNs = { context, localName, prefix, uri, _, _, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context), let localName else { return }
            if !run.builder.startElement(name: localName, inNamespace: prefix != nil || uri != nil) { run.stop(parser) }
        }
        handler.endElementNs = { context, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            if !run.builder.endElement() { run.stop(parser) }
        }
        let characters: charactersSAXFunc = { context, text, length in
            guard let (parser, run) = ParseRun.unpack(context), let text, length > 0 else { return }
            if !run.builder.characters(UnsafeBufferPointer(start: text, count: Int(length))) { run.stop(parser) }
        }
        handler.characters = characters
        handler.cdataBlock = characters
        handler.ignorableWhitespace = characters
        handler.entityDecl = { context, name, _, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            run.refuse(parser, "the document declares the entity \(name.map { String(cString: $0) } ?? "?"); property lists do not use entities")
        }
        handler.unparsedEntityDecl = { context, name, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            run.refuse(parser, "the document declares the entity \(name.map { String(cString: $0) } ?? "?"); property lists do not use entities")
        }
        handler.getEntity = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return nil }
            run.refuse(parser, "the document refers to the entity &\(name.map { String(cString: $0) } ?? "?");, which is not one of XML's predefined entities")
            return nil
        }
        handler.getParameterEntity = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return nil }
            run.refuse(parser, "the document refers to the parameter entity %\(name.map { String(cString: $0) } ?? "?");")
            return nil
        }
        handler.reference = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            run.refuse(parser, "the document refers to the entity &\(name.map { String(cString: $0) } ?? "?");")
        }
        handler.serror = { context, error in
            guard let (parser, run) = ParseRun.unpack(context), let error else { return }
            run.record(error, offset: Int(xmlByteConsumed(parser)))
        }
        return handler
    }
}

/// libxml2 wants `xmlInitParser()` once, before threads use it.
private let libxml2Initialized: Void = xmlInitParser()

/// One parse: the builder and what libxml2 reported.
private final class ParseRun {
    let builder: PlistTreeBuilder
    /// The first error libxml2 reported (a document that is not well-formed XML).
    var failure: CodecError?

    init(limits: CodecLimits) {
        builder = PlistTreeBuilder(limits: limits)
    }

    /// Parses, returning libxml2's status (0 when well-formed).
    func parse(_ chars: UnsafeBufferPointer<CChar>) -> Int32 {
        guard let parser = xmlCreateMemoryParserCtxt(chars.baseAddress, Int32(chars.count)) else {
            failure = CodecError(.backendFailure, "libxml2 could not make a parser")
            return -1
        }
        defer { xmlFreeParserCtxt(parser) }
        _ = xmlCtxtUseOptions(parser, XMLPlistSAXParser.options)
        parser.pointee.sax.pointee = XMLPlistSAXParser.makeHandler()
        parser.pointee.userData = UnsafeMutableRawPointer(parser)
        let me = Unmanaged.passUnretained(self).toOpaque()
        parser.pointee._private = me

        // Errors raised outside the parser context (encoding conversion) go to
        // the thread's structured handler; catch them there too, then restore it.
        let previousHandler = CAnchorageXML2_structuredErrorHandler()
        let previousContext = CAnchorageXML2_structuredErrorContext()
        xmlSetStructuredErrorFunc(me) { context, error in
            guard let context, let error else { return }
            Unmanaged<ParseRun>.fromOpaque(context).takeUnretainedValue().record(error, offset: nil)
        }
        defer { xmlSetStructuredErrorFunc(previousContext, previousHandler) }

        let status = withExtendedLifetime(self) { xmlParseDocument(parser) }
        return status == 0 && parser.pointee.wellFormed != 0 ? 0 : -1
    }

    static func unpack(_ context: UnsafeMutableRawPointer?) -> (xmlParserCtxtPtr, ParseRun)? {
        guard let context else { return nil }
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let run = parser.pointee._private else { return nil }
        return (parser, Unmanaged<ParseRun>.fromOpaque(run).takeUnretainedValue())
    }

    /// Stops the parser after the builder recorded a failure, adding where it happened.
    func stop(_ parser: xmlParserCtxtPtr) {
        if builder.failure != nil, failure == nil {
            failure = builder.failure
            failure?.offset = Int(xmlByteConsumed(parser))
        }
        xmlStopParser(parser)
    }

    /// Refuses the document (entities) and stops the parser.
    func refuse(_ parser: xmlParserCtxtPtr, _ message: String) {
        if failure == nil && builder.failure == nil {
            failure = .malformedInput(message, offset: Int(xmlByteConsumed(parser)))
        }
        xmlStopParser(parser)
    }

    /// Keeps the first error libxml2 reports.
    func record(_ error: UnsafePointer<xmlError>, offset: Int?) {
        guard failure == nil, builder.failure == nil else { return }
        var message = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
        while message.last?.isWhitespace == true { message.removeLast() }
        if error.pointee.line > 0 {
            message += " (line \(error.pointee.line), column \(error.pointee.int2))"
        }
        failure = .malformedInput("not well-formed XML: " + message, offset: offset)
    }
}
