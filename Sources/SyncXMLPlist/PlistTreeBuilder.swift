#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Builds a ``SyncValue`` from the start-element, text and end-element events
/// of an XML property list, with an explicit stack (no recursion), enforcing
/// the plist grammar and the depth and element-count limits.
///
/// Each event method returns `false` after recording ``failure``; the caller
/// then stops the parser.
final class PlistTreeBuilder {
    /// An open `<plist>`, `<array>` or `<dict>`.
    private struct Container {
        var element: PlistElement
        var elements: [SyncValue] = []
        var entries: [String: SyncValue] = [:]
        /// In a dict: the key read, awaiting its value. In the plist: unused.
        var pendingKey: String?
        /// In the plist: its one value.
        var rootValue: SyncValue?
    }

    private let limits: CodecLimits
    private var containers: [Container] = []
    /// The scalar element (`<string>`, `<key>`, …) open now, if any; scalars do not nest.
    private var openScalar: PlistElement?
    /// The text of the open scalar element.
    private var text: [UInt8] = []
    private var valueCount = 0
    private var sawRoot = false

    /// The first problem found, without an offset (the caller knows where the parser is).
    private(set) var failure: CodecError?
    /// The finished value, once `</plist>` closes.
    private(set) var result: SyncValue?

    init(limits: CodecLimits) {
        self.limits = limits
        text.reserveCapacity(64)
    }

    private func fail(_ code: CodecError.Code, _ message: String) -> Bool {
        if failure == nil { failure = CodecError(code, message) }
        return false
    }

    // MARK: Events

    /// An element starts. `name` is its NUL-terminated local name.
    func startElement(name: UnsafePointer<UInt8>, inNamespace: Bool) -> Bool {
        guard !inNamespace, let element = PlistElement(name: name) else {
            let shown = String(cString: name)
            return fail(.malformedInput, "<\(shown)> is not a property list element" + (inNamespace ? " (it is in a namespace)" : ""))
        }
        if let openScalar {
            return fail(.malformedInput, "<\(element.name)> cannot appear inside <\(openScalar.name)>")
        }
        guard let parent = containers.last else {
            guard element == .plist, !sawRoot else {
                return fail(.malformedInput, "the root element must be <plist>, not <\(element.name)>")
            }
            sawRoot = true
            containers.append(Container(element: .plist))
            return true
        }
        switch element {
        case .plist:
            return fail(.malformedInput, "<plist> can only be the root element")
        case .key:
            guard parent.element == .dict else {
                return fail(.malformedInput, "<key> can only appear directly inside <dict>, not <\(parent.element.name)>")
            }
            guard parent.pendingKey == nil else {
                return fail(.malformedInput, "<key> \(parent.pendingKey!) has no value before the next <key>")
            }
        default:
            switch parent.element {
            case .plist where parent.rootValue != nil:
                return fail(.malformedInput, "<plist> holds more than one value")
            case .dict where parent.pendingKey == nil:
                return fail(.malformedInput, "<\(element.name)> in <dict> has no <key>")
            default: break
            }
            valueCount += 1
            guard valueCount <= limits.maxElementCount else {
                return fail(.limitExceeded, "the input holds more than the limit of \(limits.maxElementCount) values")
            }
        }
        if element == .array || element == .dict {
            guard containers.count <= limits.maxDepth else {  // the plist container adds one
                return fail(.limitExceeded, "arrays and dictionaries nest deeper than the limit of \(limits.maxDepth)")
            }
            containers.append(Container(element: element))
        } else {
            openScalar = element
            text.removeAll(keepingCapacity: true)
        }
        return true
    }

    /// Character data (already UTF-8, entities and character references resolved).
    func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch openScalar {
        case .string?, .key?, .integer?, .real?, .date?, .data?:
            text.append(contentsOf: bytes)
            return true
        default:
            guard bytes.allSatisfy(PlistNumberFormat.isWhitespace) else {
                let place = openScalar.map { "<\($0.name)/>" } ?? containers.last.map { "<\($0.element.name)>" } ?? "the document"
                return fail(.malformedInput, "text is not allowed in \(place)")
            }
            return true
        }
    }

    /// The innermost open element ends (the XML parser has checked that the names match).
    func endElement() -> Bool {
        if let scalar = openScalar {
            openScalar = nil
            if scalar == .key { return acceptKey() }
            guard let value = scalarValue(scalar) else { return false }
            return add(value)
        }
        guard let container = containers.popLast() else {
            return fail(.malformedInput, "an element ends that never started")
        }
        switch container.element {
        case .plist:
            guard let value = container.rootValue else {
                return fail(.malformedInput, "<plist> holds no value")
            }
            result = value
            return true
        case .dict:
            if let key = container.pendingKey {
                return fail(.malformedInput, "<key> \(key) has no value before </dict>")
            }
            return add(.dictionary(container.entries))
        default:
            return add(.array(container.elements))
        }
    }

    // MARK: Values

    private func acceptKey() -> Bool {
        let key = String(decoding: text, as: UTF8.self)
        let index = containers.count - 1
        guard containers[index].entries.index(forKey: key) == nil else {
            return fail(.malformedInput, "<dict> has the key \(CodecError.quoted(key)) twice")
        }
        containers[index].pendingKey = key
        return true
    }

    private func add(_ value: SyncValue) -> Bool {
        let index = containers.count - 1
        switch containers[index].element {
        case .plist:
            containers[index].rootValue = value
        case .dict:
            let key = containers[index].pendingKey!
            containers[index].pendingKey = nil
            containers[index].entries[key] = value
        default:
            containers[index].elements.append(value)
        }
        return true
    }

    private func scalarValue(_ element: PlistElement) -> SyncValue? {
        switch element {
        case .string:
            return .string(String(decoding: text, as: UTF8.self))
        case .true:
            return .bool(true)
        case .false:
            return .bool(false)
        case .integer:
            let parsed = text.withUnsafeBufferPointer(PlistNumberFormat.integer(parsing:))
            guard let parsed else {
                _ = fail(.malformedInput, "<integer> \(quoted()) is not a 64-bit integer")
                return nil
            }
            return parsed
        case .real:
            guard let real = text.withUnsafeBufferPointer(PlistNumberFormat.real(parsing:)) else {
                _ = fail(.malformedInput, "<real> \(quoted()) is not a number")
                return nil
            }
            return .real(real)
        case .date:
            let seconds = text.withUnsafeBufferPointer { text in
                var start = 0
                var end = text.count
                while start < end, PlistNumberFormat.isWhitespace(text[start]) { start += 1 }
                while end > start, PlistNumberFormat.isWhitespace(text[end - 1]) { end -= 1 }
                return PlistDateFormat.seconds(parsing: UnsafeBufferPointer(rebasing: text[start..<end]))
            }
            guard let seconds else {
                _ = fail(.malformedInput, "<date> \(quoted()) is not a date of the form yyyy-MM-ddTHH:mm:ssZ")
                return nil
            }
            return .date(Date(timeIntervalSince1970: Double(seconds)))
        case .data:
            guard let bytes = text.withUnsafeBufferPointer(PlistBase64.decode) else {
                _ = fail(.malformedInput, "<data> is not valid base64")
                return nil
            }
            return .data(bytes)
        case .plist, .dict, .array, .key:
            return nil
        }
    }

    /// The open element's text for a message, shortened.
    private func quoted() -> String {
        let shown = String(decoding: text.prefix(40), as: UTF8.self)
        return "\"\(shown)\(text.count > 40 ? "…" : "")\""
    }
}
