/// A coding key made at run time: an array index in a coding path, or the
/// `super` key of `superEncoder()` / `superDecoder()`.
struct SyncCodingKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    /// The position of an element in an unkeyed container.
    static func index(_ index: Int) -> SyncCodingKey { SyncCodingKey(intValue: index) }

    /// The key `superEncoder()` and `superDecoder()` use.
    static let `super` = SyncCodingKey(stringValue: "super")
}
