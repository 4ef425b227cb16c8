#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A server's rule for the records it takes: a record the rule refuses is
/// answered per record (HTTP 422 or the stack's own per-item refusal), is not
/// stored, and the other records of the same request go through. A device
/// drops the refused change from its journal and reports why.
///
/// ```swift
/// let validation = RecordValidation.maximumSize(64 * 1024)
///     .and { record in record.fields["title"] == nil ? "a note needs a title" : nil }
/// let server = AquasyncServer(store: store, codecs: CodecSet([JSONCodec()]), validation: validation)
/// ```
public struct RecordValidation: Sendable {
    /// The reason a record is refused, or `nil` when it is taken.
    public typealias Check = @Sendable (SyncRecord) -> String?

    private let checks: [Check]

    /// A rule made of one check.
    public init(_ check: @escaping Check) {
        self.checks = [check]
    }

    private init(checks: [Check]) {
        self.checks = checks
    }

    /// Takes every record: the default.
    public static let acceptAll = RecordValidation(checks: [])

    /// Refuses a live record whose fields take more than `bytes` bytes in the
    /// store's form (`anchorage serve --max-record-bytes`).
    public static func maximumSize(_ bytes: Int) -> RecordValidation {
        RecordValidation { record in
            guard !record.isDeleted else { return nil }
            let size = (try? StoredValueFormat.encode(fields: record.fields).count) ?? Int.max
            return size > bytes ? "the record takes \(size) bytes, more than the \(bytes) this server takes" : nil
        }
    }

    /// Whether the rule takes every record without looking at it (``acceptAll``): a server then need
    /// not make the record it would show the rule.
    public var acceptsEverything: Bool { checks.isEmpty }

    /// This rule, then `check`: a record is taken only when both take it.
    public func and(_ check: @escaping Check) -> RecordValidation {
        RecordValidation(checks: checks + [check])
    }

    /// Why `record` is refused (the first check's reason), or `nil` when it is taken.
    public func refusal(for record: SyncRecord) -> String? {
        for check in checks {
            if let reason = check(record) { return reason }
        }
        return nil
    }
}
