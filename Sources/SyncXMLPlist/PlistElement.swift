/// The elements of an XML property list.
enum PlistElement: UInt8 {
    case plist, dict, array, key, string, integer, real, `true`, `false`, date, data

    /// The element named by a NUL-terminated UTF-8 name, or `nil` for any other name.
    init?(name: UnsafePointer<UInt8>) {
        // Pack up to 8 bytes (all names are shorter) and compare once.
        var packed: UInt64 = 0
        var length = 0
        while name[length] != 0 {
            guard length < 8 else { return nil }
            packed |= UInt64(name[length]) << (8 * UInt64(length))
            length += 1
        }
        switch packed {
        case 0x7473696C70:  // "plist"
            self = .plist
        case 0x74636964:  // "dict"
            self = .dict
        case 0x7961727261:  // "array"
            self = .array
        case 0x79656B:  // "key"
            self = .key
        case 0x676E69727473:  // "string"
            self = .string
        case 0x72656765746E69:  // "integer"
            self = .integer
        case 0x6C616572:  // "real"
            self = .real
        case 0x65757274:  // "true"
            self = .true
        case 0x65736C6166:  // "false"
            self = .false
        case 0x65746164:  // "date"
            self = .date
        case 0x61746164:  // "data"
            self = .data
        default: return nil
        }
    }

    /// The element's name, for messages.
    var name: String {
        switch self {
        case .plist: "plist"
        case .dict: "dict"
        case .array: "array"
        case .key: "key"
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .true: "true"
        case .false: "false"
        case .date: "date"
        case .data: "data"
        }
    }
}
