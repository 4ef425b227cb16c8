import SyncCore

/// Measures how many bytes items add to a message in one codec, so that
/// `sync-changes` can be split into fragments that keep every message under
/// a size limit.
struct OTAMessageSizer: Sendable {
    let codec: any SyncCodec
    let limit: Int
    private let emptyDictionaryBytes: Int

    /// The bytes kept free for the command that carries the items, beyond the items themselves.
    static let commandMargin = 512

    init(codec: any SyncCodec, limit: Int) {
        self.codec = codec
        self.limit = limit
        emptyDictionaryBytes = (try? codec.encode(Self.nested([:])).count) ?? 0
    }

    /// The bytes `item` adds to an `items` dictionary under `key`, measured at
    /// the depth items have in a message (an XML plist indents by depth).
    func bytes(key: String, item: SyncValue) throws -> Int {
        try codec.encode(Self.nested([key: item])).count - emptyDictionaryBytes + 8
    }

    /// `items` where a message holds them: message → body → command → params → items.
    private static func nested(_ items: [String: SyncValue]) -> SyncValue {
        ["body": [["params": ["items": .dictionary(items)]]]]
    }

    /// The encoded size of a whole message.
    func bytes(of message: OTAMessage) throws -> Int { try codec.encode(message.value).count }

    /// The bytes left for items once `message` is encoded, keeping a margin for
    /// the `sync-changes` command that carries them.
    func room(in message: OTAMessage) throws -> Int {
        limit - (try bytes(of: message)) - Self.commandMargin
    }
}
