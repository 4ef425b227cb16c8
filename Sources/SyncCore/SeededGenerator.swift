/// A small, fast, seedable random number generator (SplitMix64): the same seed gives the same
/// sequence on every platform, so sample data comes out byte for byte the same on every run and a
/// failing property test can be replayed from its seed.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// let pick = ["a", "b", "c"].randomElement(using: &random)   // the same on every run
/// ```
///
/// Not for secrets: its output is predictable from the seed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Makes a generator; the same seed gives the same sequence on every platform.
    public init(seed: UInt64) { self.state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
