#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SyncCore

/// Makes random ``SyncValue``s for property tests, limited to what a codec carries.
///
/// ```swift
/// var values = RandomValues(seed: 42, features: codec.features)
/// for _ in 0..<10_000 { let value = values.next(); … }
/// ```
///
/// Dates are whole seconds between 1900 and 2200 (every built-in codec
/// carries those exactly); reals are finite; strings mix ASCII, escapes,
/// control characters, accents, CJK and astral-plane emoji.
public struct RandomValues: Sendable {
    /// The generator; read its state to replay.
    public var generator: SeededGenerator
    /// Which optional kinds to produce.
    public var features: CodecFeatures
    /// The deepest nesting produced.
    public var maxDepth: Int
    /// The most elements in one array or dictionary.
    public var maxContainerCount: Int

    /// Makes a source of random values.
    public init(seed: UInt64, features: CodecFeatures, maxDepth: Int = 4, maxContainerCount: Int = 6) {
        self.generator = SeededGenerator(seed: seed)
        self.features = features
        self.maxDepth = maxDepth
        self.maxContainerCount = maxContainerCount
    }

    /// The next random value, nested at most ``maxDepth`` deep.
    public mutating func next() -> SyncValue { value(depth: 0) }

    /// The next random dictionary (what every wire message is at its top).
    public mutating func nextDictionary() -> SyncValue {
        var entries: [String: SyncValue] = [:]
        for _ in 0..<Int.random(in: 1...maxContainerCount, using: &generator) {
            entries[string()] = value(depth: 1)
        }
        return .dictionary(entries)
    }

    private mutating func value(depth: Int) -> SyncValue {
        let containerWeight = depth < maxDepth ? 2 : 0
        let choice = Int.random(in: 0..<(9 + containerWeight * 2), using: &generator)
        switch choice {
        case 0: return .string(string())
        case 1: return .integer(integer())
        case 2: return .real(real())
        case 3: return .bool(Bool.random(using: &generator))
        case 4:
            if features.contains(.date) {
                return .date(Date(timeIntervalSince1970: Double(Int64.random(in: -2_208_988_800...7_258_118_400, using: &generator))))
            }
            return .string(string())
        case 5:
            if features.contains(.data) {
                return .data((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            }
            return .integer(integer())
        case 6:
            if features.contains(.null) { return .null }
            return .bool(Bool.random(using: &generator))
        case 7:
            if features.contains(.unsignedInteger) {
                return .unsignedInteger(UInt64.random(in: UInt64(Int64.max) + 1...UInt64.max, using: &generator))
            }
            return .integer(integer())
        case 8: return .string(string())
        case 9, 10:
            return .array((0..<Int.random(in: 0...maxContainerCount, using: &generator)).map { _ in value(depth: depth + 1) })
        default:
            var entries: [String: SyncValue] = [:]
            for _ in 0..<Int.random(in: 0...maxContainerCount, using: &generator) {
                entries[string()] = value(depth: depth + 1)
            }
            return .dictionary(entries)
        }
    }

    private static let alphabet: [Unicode.Scalar] = Array(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;/\\\"'<>&=?!@#%+*()[]{}".unicodeScalars)
    private static let exotic: [Unicode.Scalar] = [
        "\u{0}", "\u{1}", "\u{8}", "\u{9}", "\u{A}", "\u{D}", "\u{1F}", "\u{7F}", "é", "ß", "ø", "Ω", "ж", "中", "文", "€",
        "\u{2028}", "\u{FEFF}", "\u{FFFD}", "😀", "🎉", "𝄞", "\u{10FFFF}",
    ]

    private mutating func string() -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...16, using: &generator) {
            if Int.random(in: 0..<8, using: &generator) == 0 {
                scalars.append(Self.exotic.randomElement(using: &generator)!)
            } else {
                scalars.append(Self.alphabet.randomElement(using: &generator)!)
            }
        }
        return String(scalars)
    }

    private mutating func integer() -> Int64 {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: [Int64.min, Int64.max, 0, -1, 1, 127, 128, 255, 256, -32_768, 65_535, 65_536, 1 << 31, -(1 << 31) - 1, 1 << 32]
            .randomElement(using: &generator)!
        case 1: Int64.random(in: Int64.min...Int64.max, using: &generator)
        case 2: Int64.random(in: -1_000_000...1_000_000, using: &generator)
        default: Int64.random(in: -200...200, using: &generator)
        }
    }

    private mutating func real() -> Double {
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: [0.0, -0.5, 1.5, 3.0, 1e-300, 1e300, .pi, -2.5e-8, Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude]
            .randomElement(using: &generator)!
        case 1: Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &generator) & 0x7FEF_FFFF_FFFF_FFFF)
        default: Double.random(in: -1e6...1e6, using: &generator)
        }
    }
}
