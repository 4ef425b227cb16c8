public import SyncCore

/// Checks that a ``SyncCodec`` keeps the promises of the protocol, the way
/// NIO's `ByteToMessageDecoderVerifier` checks decoders:
///
/// - values round-trip: `decode(encode(v)) == v`;
/// - every strict prefix of an encoding is rejected with a ``CodecError``;
/// - random bytes never crash the decoder;
/// - input past the limits is rejected with ``CodecError/Code/limitExceeded``.
///
/// ```swift
/// let verifier = CodecVerifier(codec: JSONCodec())
/// try verifier.verifyRandomRoundTrips(count: 10_000, seed: 1)
/// try verifier.verifyTruncationsRejected(of: sample)
/// ```
public struct CodecVerifier: Sendable {
    /// The codec under test.
    public let codec: any SyncCodec

    /// Makes a verifier.
    public init(codec: any SyncCodec) { self.codec = codec }

    /// Checks that each value survives encode-then-decode unchanged.
    /// - Throws: ``VerificationError`` naming the first value that did not.
    public func verifyRoundTrip(_ values: [SyncValue]) throws {
        for value in values {
            let bytes: [UInt8]
            do { bytes = try codec.encode(value) } catch {
                throw VerificationError("\(codec.id): encoding \(value) failed: \(error)")
            }
            let decoded: SyncValue
            do { decoded = try codec.decode(bytes) } catch {
                throw VerificationError("\(codec.id): decoding the encoding of \(value) failed: \(error)")
            }
            guard decoded == value else {
                throw VerificationError("\(codec.id): round trip changed \(value) into \(decoded)")
            }
        }
    }

    /// Checks `count` random values made for the codec's ``SyncCodec/features``.
    /// - Throws: ``VerificationError`` with the seed and the failing value.
    public func verifyRandomRoundTrips(count: Int, seed: UInt64) throws {
        var values = RandomValues(seed: seed, features: codec.features)
        for index in 0..<count {
            let value = values.next()
            do { try verifyRoundTrip([value]) } catch let error as VerificationError {
                throw VerificationError("seed \(seed), value #\(index): \(error.message)")
            }
        }
    }

    /// Checks that every strict prefix of `value`'s encoding is rejected with a
    /// ``CodecError`` (a prefix that differs from the whole only by trailing
    /// white space may decode to `value` itself).
    /// - Throws: ``VerificationError`` naming the first prefix that decoded to something else.
    public func verifyTruncationsRejected(of value: SyncValue) throws {
        let bytes = try encodeOrFail(value)
        for length in 0..<bytes.count {
            let prefix = Array(bytes[..<length])
            if let decoded = try? codec.decode(prefix) {
                let rest = bytes[length...]
                let onlyWhitespace = rest.allSatisfy { [0x20, 0x09, 0x0A, 0x0D].contains($0) }
                guard onlyWhitespace, decoded == value else {
                    throw VerificationError(
                        "\(codec.id): the first \(length) of \(bytes.count) bytes decoded to \(decoded) instead of failing")
                }
            }
        }
    }

    /// Feeds `count` random byte strings (and random corruptions of `sample`'s
    /// encoding) to the decoder: it must return or throw a ``CodecError``, never crash.
    /// Returns how many inputs were rejected.
    /// - Throws: ``VerificationError`` when `sample` cannot be encoded.
    @discardableResult
    public func verifyGarbageHandled(count: Int, seed: UInt64, sample: SyncValue) throws -> Int {
        var generator = SeededGenerator(seed: seed)
        let encoded = try encodeOrFail(sample)
        var rejected = 0
        for index in 0..<count {
            var input: [UInt8]
            if index % 2 == 0 || encoded.isEmpty {
                input = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                input = encoded
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    input[Int.random(in: 0..<input.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            do { _ = try codec.decode(input) } catch { rejected += 1 }
        }
        return rejected
    }

    /// Checks that `bytes` is rejected with a ``CodecError`` of `code`.
    /// - Throws: ``VerificationError`` when it decodes or fails otherwise.
    public func verifyRejected(_ bytes: [UInt8], with code: CodecError.Code) throws {
        do {
            let value = try codec.decode(bytes)
            throw VerificationError("\(codec.id): expected \(code), decoded \(value)")
        } catch let error as CodecError {
            guard error.code == code else {
                throw VerificationError("\(codec.id): expected \(code), got \(error)")
            }
        }
    }

    /// Checks that a value nested deeper than the codec's depth limit is refused
    /// by the encoder and, when encoded by a codec with a higher limit, by the decoder.
    /// - Throws: ``VerificationError``.
    public func verifyDepthLimit(encodingWith permissive: any SyncCodec) throws {
        var deep: SyncValue = .array([])
        for _ in 0...codec.limits.maxDepth { deep = .array([deep]) }
        do {
            _ = try codec.encode(deep)
            throw VerificationError("\(codec.id): encoded a value deeper than its limit")
        } catch let error as CodecError where error.code == .limitExceeded {}
        let bytes: [UInt8]
        do { bytes = try permissive.encode(deep) } catch {
            throw VerificationError("\(permissive.id) could not encode the deep sample: \(error)")
        }
        try verifyRejected(bytes, with: .limitExceeded)
    }

    private func encodeOrFail(_ value: SyncValue) throws -> [UInt8] {
        do { return try codec.encode(value) } catch {
            throw VerificationError("\(codec.id): encoding the sample failed: \(error)")
        }
    }
}

/// A promise of the protocol that a component under test did not keep.
public struct VerificationError: Error, Sendable, CustomStringConvertible {
    /// What was expected and what happened.
    public var message: String
    /// Makes an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
