import SyncCore

/// appSync's messages as they travel, read and written through
/// ``SyncCore/SyncValueEncoder`` and ``SyncCore/SyncValueDecoder``.
///
/// `GET /rest/{type}/list/{servercounter}` answers a ``ListAnswer``;
/// `POST /rest/{type}/update` carries an ``UpdateRequest`` and answers an ``UpdateAnswer``.
enum AppSyncMessages {
    /// The answer to a list: the objects changed after the counter asked for, and where the list reached.
    struct ListAnswer: Codable {
        var objects: [AppSyncObject]
        var result: ListResult
    }

    /// `result` of a list answer.
    struct ListResult: Codable {
        var statuscode: String?
        /// The server counter the list reached: ask after it next.
        var servercounter: Int64
        /// `true` when a page limit cut the list and more objects follow.
        var more: Bool?
    }

    /// The body of an update: the objects a client uploads.
    struct UpdateRequest: Codable {
        var objects: [AppSyncObject]
    }

    /// The answer to an update.
    struct UpdateAnswer: Codable {
        var result: UpdateResult
    }

    /// `result` of an update answer.
    struct UpdateResult: Codable {
        var statuscode: String?
        /// The server counter after the update.
        var servercounter: Int64
        /// The counter right before the applied objects, when they took the positions right after it.
        var servercounterBefore: Int64?
        /// The objects the server refused.
        var rejected: [Rejection]?

        enum CodingKeys: String, CodingKey {
            case statuscode, servercounter, rejected
            case servercounterBefore = "servercounter_before"
        }
    }

    /// An object an update refused, and why.
    struct Rejection: Codable {
        var guid: String
        var reason: String?
        /// 409 for a primary key another object holds (a conflict), 422 for
        /// an object the server's rule refuses for good; servers of earlier
        /// versions send none, which means 409.
        var status: Int?
    }
}

/// An object is `Codable` in its wire form, ``AppSyncObject/value``, so that
/// messages can hold objects.
extension AppSyncObject: Codable {
    /// Reads an object from its wire form.
    /// - Throws: `DecodingError.dataCorrupted` naming the field that is missing or of the wrong type.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(SyncValue.self)
        var path = ""
        for key in decoder.codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += (path.isEmpty ? "" : ".") + key.stringValue }
        }
        do {
            try self.init(value, at: path.isEmpty ? "object" : path)
        } catch {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    /// Writes the object's wire form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}
