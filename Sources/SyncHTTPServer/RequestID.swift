#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import Logging
import SyncCore

/// The id of the HTTP request being answered: every log line about one request carries it.
///
/// ``SyncServiceResponder`` takes the client's `X-Request-ID` when it is sane (1 to 128
/// characters among letters, digits and `-._:`), makes one otherwise, returns it as
/// `X-Request-ID` on the answer, passes it to the service as ``SyncCore/ServiceContext/requestID``
/// and sets ``current`` while the request is answered. Bootstrap swift-log with
/// ``metadataProvider`` and every logger — a stack's, a store's — adds it as `request.id`:
///
/// ```swift
/// LoggingSystem.bootstrap({ label, provider in StreamLogHandler.standardError(label: label, metadataProvider: provider) },
///                         metadataProvider: RequestID.metadataProvider)
/// ```
public enum RequestID {
    /// The id of the request this task answers, or `nil` outside one.
    @TaskLocal public static var current: String?

    /// The HTTP header that carries the id both ways.
    public static let header = "X-Request-ID"

    /// The metadata key log lines carry the id under.
    public static let metadataKey = "request.id"

    /// Adds `request.id` to a log line written while a request is answered.
    public static let metadataProvider = Logger.MetadataProvider {
        guard let id = current else { return [:] }
        return [metadataKey: .string(id)]
    }

    /// The client's id when it is sane, or a new one: a UUID in time order (``SyncCore/TimeOrderedUUID``),
    /// so that the ids of a server's log sort by when their requests came, and no file is opened for its
    /// random bits (Foundation's random `UUID()` reads `/dev/urandom` each time).
    static func id(fromClient value: String?) -> String {
        if let value, isSane(value) { return value }
        return TimeOrderedUUID.make().uuidString.lowercased()
    }

    /// 1 to 128 characters among ASCII letters, digits and `-._:`.
    static func isSane(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x3A
            }
    }
}
