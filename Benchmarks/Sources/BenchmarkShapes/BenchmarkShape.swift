public import SyncCore
import SyncSamples

/// The two standard documents every codec benchmark runs on.
///
/// ```swift
/// for shape in BenchmarkShape.allCases {
///     let bytes = try JSONCodec().encode(shape.value)
///     print(shape, bytes.count)
/// }
/// ```
public enum BenchmarkShape: String, CaseIterable, Sendable, CustomStringConvertible {
    /// An OTA `sync-changes` message carrying 1,000 contacts, one in ten with a 20–60 KB photo.
    case message
    /// 10,000 contacts without photos, in an array.
    case records

    /// The document as a value (made once, then shared).
    public var value: SyncValue {
        switch self {
        case .message: Self.messageValue
        case .records: Self.recordsValue
        }
    }

    /// The shape's name, as the benchmarks and the ratio table print it.
    public var description: String { rawValue }

    private static let messageValue = SampleContacts.standardMessage()
    private static let recordsValue = SampleContacts.standardRecords()
}
