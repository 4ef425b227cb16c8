#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore

/// Builds a ``SyncValue`` from the start-element, text and end-element events
/// of an XML property list, with explicit stacks (no recursion), enforcing
/// the plist grammar and the depth and element-count limits.
///
/// Values wait on one stack until their container ends, and a dictionary's
/// keys on another, so a container is made once, at its size, when it ends.
///
/// Each event method returns `false` after recording ``failure``; the caller
/// then stops the parser.
struct PlistTreeBuilder: ~Copyable {
    /// An open `<plist>`, `<array>` or `<dict>` (plain values only, cheap to copy).
    struct Container {
        var element: PlistElement
        /// Where its values start on `values`.
        var valuesStart: Int
        /// Where its keys start on `keys` (in a dict).
        var keysStart: Int
        /// In a dict of many keys: whether its keys are also in the last of `keySets`.
        var hasKeySet = false
    }

    /// Up to this many keys, a dict's new key is compared with each earlier one; past it, a set is kept.
    private static let keysComparedDirectly = 16

    private let limits: CodecLimits
    private var containers = PlistStack<Container>(capacity: 16)
    /// The keys of each open dict of many keys, to find a duplicate without comparing with each
    /// (dicts end innermost first, so the innermost such dict's set is the last).
    private var keySets: [Set<String>] = []
    private var values = PlistStack<SyncValue>(capacity: 256)
    private var keys = PlistStack<PlistKey>(capacity: 64)
    private var keyNames = PlistKeyCache()
    private var dictionaryShapes = PlistDictionaryShapes()
    /// The scalar element (`<string>`, `<key>`, …) open now, if any; scalars do not nest.
    private var openScalar: PlistElement?
    /// The text of the open scalar element; for `<data>`, the bytes decoded so far.
    private var text = PlistTextBuffer(capacity: 1_024)
    /// Decodes the base64 of the open `<data>` as it arrives.
    private var base64 = PlistBase64.Reader()
    private var valueCount = 0
    private var sawRoot = false

    /// The first problem found, without an offset (the caller knows where the parser is).
    private(set) var failure: CodecError?
    /// The finished value, once `</plist>` closes.
    private(set) var result: SyncValue?

    init(limits: CodecLimits) {
        self.limits = limits
    }

    private mutating func fail(_ code: CodecError.Code, _ message: String) -> Bool {
        if failure == nil { failure = CodecError(code, message) }
        return false
    }

    // MARK: Events

    /// An element starts. `name` is its NUL-terminated local name.
    mutating func startElement(name: UnsafePointer<UInt8>, inNamespace: Bool) -> Bool {
        guard !inNamespace, let element = PlistElement(name: name) else {
            let shown = String(cString: name)
            return fail(.malformedInput, "<\(shown)> is not a property list element" + (inNamespace ? " (it is in a namespace)" : ""))
        }
        if let openScalar {
            return fail(.malformedInput, "<\(element.name)> cannot appear inside <\(openScalar.name)>")
        }
        guard containers.count > 0 else {
            guard element == .plist, !sawRoot else {
                return fail(.malformedInput, "the root element must be <plist>, not <\(element.name)>")
            }
            sawRoot = true
            containers.push(Container(element: .plist, valuesStart: values.count, keysStart: keys.count))
            return true
        }
        let parent = containers.last
        let parentElement = parent.element
        switch element {
        case .plist:
            return fail(.malformedInput, "<plist> can only be the root element")
        case .key:
            guard parentElement == .dict else {
                return fail(.malformedInput, "<key> can only appear directly inside <dict>, not <\(parentElement.name)>")
            }
            guard !hasPendingKey(parent) else {
                return fail(.malformedInput, "<key> \(keys[keys.count - 1].string) has no value before the next <key>")
            }
        default:
            switch parentElement {
            case .plist where values.count > parent.valuesStart:
                return fail(.malformedInput, "<plist> holds more than one value")
            case .dict where !hasPendingKey(parent):
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
            containers.push(Container(element: element, valuesStart: values.count, keysStart: keys.count))
        } else {
            openScalar = element
            text.removeAll()
            if element == .data { base64 = PlistBase64.Reader() }
        }
        return true
    }

    /// Character data (already UTF-8, entities and character references resolved).
    mutating func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch openScalar {
        case .string?, .key?, .integer?, .real?, .date?:
            text.append(bytes)
            return true
        case .data?:
            base64.read(bytes, into: &text)
            return true
        default:
            guard bytes.allSatisfy(PlistNumberFormat.isWhitespace) else {
                let place = openScalar.map { "<\($0.name)/>" } ?? (containers.count > 0 ? "<\(containers.last.element.name)>" : "the document")
                return fail(.malformedInput, "text is not allowed in \(place)")
            }
            return true
        }
    }

    /// The innermost open element ends (the XML parser has checked that the names match).
    mutating func endElement() -> Bool {
        if let scalar = openScalar {
            openScalar = nil
            if scalar == .key { return acceptKey() }
            guard let value = scalarValue(scalar) else { return false }
            values.push(value)
            return true
        }
        guard containers.count > 0 else {
            return fail(.malformedInput, "an element ends that never started")
        }
        let container = containers.pop()
        switch container.element {
        case .plist:
            guard values.count > container.valuesStart else {
                return fail(.malformedInput, "<plist> holds no value")
            }
            result = values.pop()
            return true
        case .dict:
            if hasPendingKey(container) {
                return fail(.malformedInput, "<key> \(keys[keys.count - 1].string) has no value before </dict>")
            }
            if container.hasKeySet { keySets.removeLast() }
            guard let entries = popDictionary(keysFrom: container.keysStart, valuesFrom: container.valuesStart) else {
                return fail(.malformedInput, "<dict> has a key twice")
            }
            values.push(.dictionary(entries))
            return true
        default:
            values.push(.array(values.popArray(from: container.valuesStart)))
            return true
        }
    }

    // MARK: Values

    /// Whether a dict read a key that has no value yet (each key waits on `keys` until the dict ends).
    private func hasPendingKey(_ container: Container) -> Bool {
        keys.count - container.keysStart > values.count - container.valuesStart
    }

    private mutating func acceptKey() -> Bool {
        let key = text.withBytes { keyNames.key(for: $0) }
        let dict = containers.last
        let start = dict.keysStart
        let duplicate: Bool
        if keys.count - start < Self.keysComparedDirectly {
            duplicate = keys.contains(from: start) { !$0.surelyDiffers(from: key) && $0.string == key.string }
        } else {
            if !dict.hasKeySet {
                var earlier = Set<String>(minimumCapacity: Self.keysComparedDirectly * 4)
                for index in start..<keys.count { earlier.insert(keys[index].string) }
                keySets.append(earlier)
                containers.updateLast { $0.hasKeySet = true }
            }
            duplicate = !keySets[keySets.count - 1].insert(key.string).inserted
        }
        guard !duplicate else {
            return fail(.malformedInput, "<dict> has the key \(CodecError.quoted(key.string)) twice")
        }
        keys.push(key)
        return true
    }

    /// Moves a dict's keys and values off their stacks into a dictionary made at its final size;
    /// `nil` if two keys are equal (which `acceptKey` has already refused).
    private mutating func popDictionary(keysFrom keysStart: Int, valuesFrom valuesStart: Int) -> [String: SyncValue]? {
        keys.popMovingOut(from: keysStart) { keyBuffer in
            values.popMovingOut(from: valuesStart) { valueBuffer in
                dictionaryShapes.dictionary(keys: keyBuffer, values: valueBuffer)
            }
        }
    }

    private mutating func scalarValue(_ element: PlistElement) -> SyncValue? {
        switch element {
        case .string:
            return .string(text.withBytes { String(decoding: $0, as: UTF8.self) })
        case .true:
            return .bool(true)
        case .false:
            return .bool(false)
        case .integer:
            guard let parsed = text.withBytes(PlistNumberFormat.integer(parsing:)) else {
                return failing(.malformedInput, "<integer> \(quoted()) is not a 64-bit integer")
            }
            return parsed
        case .real:
            guard let real = text.withBytes(PlistNumberFormat.real(parsing:)) else {
                return failing(.malformedInput, "<real> \(quoted()) is not a number")
            }
            return .real(real)
        case .date:
            let seconds = text.withBytes { text in
                var start = 0
                var end = text.count
                while start < end, PlistNumberFormat.isWhitespace(text[start]) { start += 1 }
                while end > start, PlistNumberFormat.isWhitespace(text[end - 1]) { end -= 1 }
                return PlistDateFormat.seconds(parsing: UnsafeBufferPointer(rebasing: text[start..<end]))
            }
            guard let seconds else {
                return failing(.malformedInput, "<date> \(quoted()) is not a date of the form yyyy-MM-ddTHH:mm:ssZ")
            }
            return .date(Date(timeIntervalSince1970: Double(seconds)))
        case .data:
            guard base64.finish(into: &text) else {
                return failing(.malformedInput, "<data> is not valid base64")
            }
            return .data(text.withBytes { Array($0) })
        case .plist, .dict, .array, .key:
            return nil
        }
    }

    private mutating func failing(_ code: CodecError.Code, _ message: String) -> SyncValue? {
        _ = fail(code, message)
        return nil
    }

    /// The open element's text for a message, shortened.
    private func quoted() -> String {
        text.withBytes { text in
            let shown = String(decoding: text.prefix(40), as: UTF8.self)
            return "\"\(shown)\(text.count > 40 ? "…" : "")\""
        }
    }
}
