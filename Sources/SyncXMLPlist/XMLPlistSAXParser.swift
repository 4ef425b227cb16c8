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
        // The run lives in memory of its own, not in a class, so that the callbacks reach it
        // through a plain pointer: no reference counting and no dynamic exclusivity checks per event.
        let run = UnsafeMutablePointer<ParseRun>.allocate(capacity: 1)
        run.initialize(to: ParseRun(limits: limits))
        defer {
            run.deinitialize(count: 1)
            run.deallocate()
        }
        let status = bytes.withUnsafeBytes { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in ParseRun.parse(chars, into: run) }
        }
        if let failure = run.pointee.failure ?? run.pointee.builder.failure { throw failure }
        guard status == 0, let value = run.pointee.builder.result else {
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
            if !run.pointee.builder.startElement(name: localName, inNamespace: prefix != nil || uri != nil) {
                ParseRun.stop(run, parser)
            }
        }
        handler.endElementNs = { context, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            if !run.pointee.builder.endElement() { ParseRun.stop(run, parser) }
        }
        let characters: charactersSAXFunc = { context, text, length in
            guard let (parser, run) = ParseRun.unpack(context), let text, length > 0 else { return }
            if !run.pointee.builder.characters(UnsafeBufferPointer(start: text, count: Int(length))) {
                ParseRun.stop(run, parser)
            }
        }
        handler.characters = characters
        handler.cdataBlock = characters
        handler.ignorableWhitespace = characters
        handler.entityDecl = { context, name, _, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            ParseRun.refuse(run, parser, "the document declares the entity \(name.map { String(cString: $0) } ?? "?"); property lists do not use entities")
        }
        handler.unparsedEntityDecl = { context, name, _, _, _ in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            ParseRun.refuse(run, parser, "the document declares the entity \(name.map { String(cString: $0) } ?? "?"); property lists do not use entities")
        }
        handler.getEntity = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return nil }
            ParseRun.refuse(run, parser, "the document refers to the entity &\(name.map { String(cString: $0) } ?? "?");, which is not one of XML's predefined entities")
            return nil
        }
        handler.getParameterEntity = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return nil }
            ParseRun.refuse(run, parser, "the document refers to the parameter entity %\(name.map { String(cString: $0) } ?? "?");")
            return nil
        }
        handler.reference = { context, name in
            guard let (parser, run) = ParseRun.unpack(context) else { return }
            ParseRun.refuse(run, parser, "the document refers to the entity &\(name.map { String(cString: $0) } ?? "?");")
        }
        handler.serror = { context, error in
            guard let (parser, run) = ParseRun.unpack(context), let error else { return }
            run.pointee.record(error, offset: Int(xmlByteConsumed(parser)))
        }
        return handler
    }
}

/// libxml2 wants `xmlInitParser()` once, before threads use it.
private let libxml2Initialized: Void = xmlInitParser()

/// One parse: the builder and what libxml2 reported. It lives in memory the
/// parse allocates, and libxml2's callbacks reach it through the parser
/// context's `_private` pointer.
private struct ParseRun: ~Copyable {
    var builder: PlistTreeBuilder
    /// The first error libxml2 reported (a document that is not well-formed XML).
    var failure: CodecError?

    init(limits: CodecLimits) {
        builder = PlistTreeBuilder(limits: limits)
    }

    /// Parses into `run`, returning libxml2's status (0 when well-formed).
    static func parse(_ chars: UnsafeBufferPointer<CChar>, into run: UnsafeMutablePointer<ParseRun>) -> Int32 {
        guard let parser = xmlCreateMemoryParserCtxt(chars.baseAddress, Int32(chars.count)) else {
            run.pointee.failure = CodecError(.backendFailure, "libxml2 could not make a parser")
            return -1
        }
        defer { xmlFreeParserCtxt(parser) }
        _ = xmlCtxtUseOptions(parser, XMLPlistSAXParser.options)
        parser.pointee.sax.pointee = XMLPlistSAXParser.makeHandler()
        parser.pointee.userData = UnsafeMutableRawPointer(parser)
        // `run` outlives the parser: the caller frees it only after this function returns.
        let me = UnsafeMutableRawPointer(run)
        parser.pointee._private = me

        // Errors raised outside the parser context (encoding conversion) go to
        // the thread's structured handler; catch them there too, then restore it.
        let previousHandler = CAnchorageXML2_structuredErrorHandler()
        let previousContext = CAnchorageXML2_structuredErrorContext()
        xmlSetStructuredErrorFunc(me) { context, error in
            guard let context, let error else { return }
            context.assumingMemoryBound(to: ParseRun.self).pointee.record(error, offset: nil)
        }
        defer { xmlSetStructuredErrorFunc(previousContext, previousHandler) }

        let status = xmlParseDocument(parser)
        return status == 0 && parser.pointee.wellFormed != 0 ? 0 : -1
    }

    /// The parser and the run behind a callback's context (the parser, whose `_private` is the run).
    @inline(__always)
    static func unpack(_ context: UnsafeMutableRawPointer?) -> (xmlParserCtxtPtr, UnsafeMutablePointer<ParseRun>)? {
        guard let context else { return nil }
        let parser = context.assumingMemoryBound(to: xmlParserCtxt.self)
        guard let run = parser.pointee._private else { return nil }
        return (parser, run.assumingMemoryBound(to: ParseRun.self))
    }

    /// Stops the parser after the builder recorded a failure, adding where it happened.
    static func stop(_ run: UnsafeMutablePointer<ParseRun>, _ parser: xmlParserCtxtPtr) {
        if let failure = run.pointee.builder.failure, run.pointee.failure == nil {
            run.pointee.failure = failure
            run.pointee.failure?.offset = Int(xmlByteConsumed(parser))
        }
        xmlStopParser(parser)
    }

    /// Refuses the document (entities) and stops the parser.
    static func refuse(_ run: UnsafeMutablePointer<ParseRun>, _ parser: xmlParserCtxtPtr, _ message: String) {
        if run.pointee.failure == nil && run.pointee.builder.failure == nil {
            run.pointee.failure = .malformedInput(message, offset: Int(xmlByteConsumed(parser)))
        }
        xmlStopParser(parser)
    }

    /// Keeps the first error libxml2 reports.
    mutating func record(_ error: UnsafePointer<xmlError>, offset: Int?) {
        guard failure == nil, builder.failure == nil else { return }
        var message = error.pointee.message.map { String(cString: $0) } ?? "error \(error.pointee.code)"
        while message.last?.isWhitespace == true { message.removeLast() }
        if error.pointee.line > 0 {
            message += " (line \(error.pointee.line), column \(error.pointee.int2))"
        }
        failure = .malformedInput("not well-formed XML: " + message, offset: offset)
    }
}
