public import SyncCore

/// Work in progress: the codec's reader and writer land in this module next.
public struct MessagePackCodec: SyncCodec {
    /// CodecID/messagePack.
    public var id: CodecID { .messagePack }
    /// The media types this codec reads and writes.
    public var mediaTypes: [String] { ["application/x-msgpack", "application/msgpack", "application/vnd.msgpack"] }
    /// What the format carries.
    public var features: CodecFeatures { [.date, .data, .unsignedInteger, .nonFiniteReal] }
    /// The limits the decoder enforces.
    public let limits: CodecLimits

    /// Makes a codec.
    public init(limits: CodecLimits = .default) { self.limits = limits }

    /// Not written yet.
    public func encode(_ value: SyncValue) throws(CodecError) -> [UInt8] {
        throw CodecError(.backendFailure, "not written yet")
    }

    /// Not written yet.
    public func decode(_ bytes: [UInt8]) throws(CodecError) -> SyncValue {
        throw CodecError(.backendFailure, "not written yet")
    }
}
