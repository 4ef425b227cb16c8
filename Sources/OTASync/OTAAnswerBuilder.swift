import SyncCore

/// The server's answer to one message, built entry by entry, and kept under
/// the size limit as the push fills it.
///
/// Responses go in as they are (``append(_:)``). The push's commands go in
/// through ``appendFitting(_:)``: each part is sized before it is appended —
/// made for the room the answer's encoded size leaves, by the sizer's
/// estimate of each item, then checked by encoding the answer with it — and
/// made again for less room when it does not fit. Nothing is appended, and no
/// session state changes, until a part fits; the answer is measured once per
/// message and once per part appended.
struct OTAAnswerBuilder {
    let sizer: OTAMessageSizer
    /// The header the answer is measured with.
    let header: OTAHeader
    /// The entries so far, in order.
    private(set) var body: [OTABodyEntry] = []
    /// The encoded size of the answer so far; nil until measured, and after an entry changed.
    private var encodedBytes: Int?

    init(sizer: OTAMessageSizer, header: OTAHeader) {
        self.sizer = sizer
        self.header = header
    }

    /// Appends an entry whatever its size (a response to the device).
    /// - Returns: its index, to ``replace(at:with:)`` it later.
    @discardableResult
    mutating func append(_ entry: OTABodyEntry) -> Int {
        body.append(entry)
        encodedBytes = nil
        return body.count - 1
    }

    /// Replaces the entry at `index`.
    mutating func replace(at index: Int, with entry: OTABodyEntry) {
        body[index] = entry
        encodedBytes = nil
    }

    /// Appends the part `make` builds for the room left, when it fits. `make` is called again with
    /// less room while the part is too large; a part of one item goes even when it is larger than
    /// the limit (a single record too large still travels, alone).
    /// - Parameter make: builds the part for `room` bytes of items, or nil for none.
    /// - Returns: the part appended, or nil when no room was left or `make` gave none.
    mutating func appendFitting<Value>(_ make: (_ room: Int) async throws -> Part<Value>?) async throws -> Part<Value>? {
        let answerBytes = try encodedBytes ?? sizer.bytes(of: OTAMessage(header: header, body: body))
        encodedBytes = answerBytes
        var room = sizer.limit - answerBytes - OTAMessageSizer.commandMargin
        while room > 1_024 {
            guard let part = try await make(room) else { return nil }
            // The items' sizes are estimates (a binary plist's references widen as it grows): the encoding decides.
            let size = try sizer.bytes(of: OTAMessage(header: header, body: body + part.entries))
            if size > sizer.limit, part.itemCount > 1 {
                room -= size - sizer.limit + 1_024
                continue
            }
            body += part.entries
            encodedBytes = size
            return part
        }
        return nil
    }

    /// Entries to append together, the items they carry, and what appending them means to the caller.
    struct Part<Value> {
        var entries: [OTABodyEntry]
        var itemCount: Int
        var value: Value
    }
}
