#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SyncCore
import SyncPush

// The JSON documents of the console's API (docs/openapi.yaml describes each).

/// A value written as JSON `null` when absent, rather than left out.
struct Nullable<Wrapped: Encodable>: Encodable {
    var value: Wrapped?

    init(_ value: Wrapped?) { self.value = value }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

/// `GET /me`.
struct Me: Encodable {
    var account: String
    var `operator`: Bool
}

/// `GET /accounts`.
struct AccountList: Encodable {
    struct Account: Encodable {
        var account: String
        var lastPosition: UInt64
        var devices: Int
        var hasPassword: Bool
        var `operator`: Bool
    }

    var accounts: [Account]
}

/// `GET /accounts/{a}/devices`.
struct DeviceList: Encodable {
    struct Push: Encodable {
        var registered = true
        var connected: Bool
        var queued: Int
        var collections: [String]

        init(_ status: PushDeviceStatus) {
            connected = status.isConnected
            queued = status.queued
            collections = status.collections.map(\.rawValue)
        }
    }

    struct Device: Encodable {
        var device: String
        var stack: String
        var codec: Nullable<String>
        var lastSeen: Nullable<Date>
        var lastStatus: Nullable<Int>
        var requests: Int
        var bytesIn: Int
        var bytesOut: Int
        var userAgent: Nullable<String>
        var push: Nullable<Push>

        init(
            device: String, stack: String, codec: String?, lastSeen: Date?, lastStatus: Int?, requests: Int, bytesIn: Int,
            bytesOut: Int, userAgent: String?, push: Push?
        ) {
            self.device = device
            self.stack = stack
            self.codec = Nullable(codec)
            self.lastSeen = Nullable(lastSeen)
            self.lastStatus = Nullable(lastStatus)
            self.requests = requests
            self.bytesIn = bytesIn
            self.bytesOut = bytesOut
            self.userAgent = Nullable(userAgent)
            self.push = Nullable(push)
        }
    }

    var devices: [Device]
}

/// `GET /accounts/{a}/collections`.
struct CollectionList: Encodable {
    struct Collection: Encodable {
        var collection: String
        var records: Int
        var deleted: Int
        var latestPosition: UInt64
        var latestModified: Date
    }

    var collections: [Collection]
}

/// A record as the console shows it: every field as text.
struct ConsoleRecord: Encodable {
    struct Field: Encodable {
        var name: String
        var type: String
        var text: String
    }

    var id: String
    var deleted: Bool
    var position: UInt64
    var modified: Date
    var node: String
    var fields: [Field]

    init(_ stored: StoredRecord) {
        id = stored.record.id.rawValue
        deleted = stored.record.isDeleted
        position = stored.position.rawValue
        modified = stored.record.version.modifiedAt
        node = stored.record.version.node.rawValue
        fields = stored.record.fields.keys.sorted().map { name in
            let value = stored.record.fields[name] ?? .null
            return Field(name: name, type: FieldText.typeName(of: value), text: FieldText.text(of: value))
        }
    }
}

/// `GET /accounts/{a}/collections/{c}/records`.
struct RecordPage: Encodable {
    var records: [ConsoleRecord]
    var next: Nullable<String>

    init(records: [ConsoleRecord], next: String?) {
        self.records = records
        self.next = Nullable(next)
    }
}

/// `GET /accounts/{a}/collections/{c}/records/{id}`.
struct RecordDetail: Encodable {
    struct Size: Encodable {
        var codec: String
        var mediaType: String
        var bytes: Nullable<Int>
        var note: Nullable<String>

        init(codec: String, mediaType: String, bytes: Int?, note: String?) {
            self.codec = codec
            self.mediaType = mediaType
            self.bytes = Nullable(bytes)
            self.note = Nullable(note)
        }
    }

    var record: ConsoleRecord
    var sizes: [Size]
}

/// `GET /load`.
struct LoadReport: Encodable {
    struct Sample: Encodable {
        var time: Date
        var requests: Int
        var syncs: Int
        var errors: Int
        var p50: Nullable<Double>
        var p99: Nullable<Double>
        var pushConnections: Nullable<Int>

        init(time: Date, requests: Int, syncs: Int, errors: Int, p50: Double?, p99: Double?, pushConnections: Int?) {
            self.time = time
            self.requests = requests
            self.syncs = syncs
            self.errors = errors
            self.p50 = Nullable(p50)
            self.p99 = Nullable(p99)
            self.pushConnections = Nullable(pushConnections)
        }
    }

    var interval: Int
    var pushConnections: Int
    var registeredDevices: Int
    var samples: [Sample]
}
