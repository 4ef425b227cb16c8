import SyncCore
import SyncTesting
import Testing

@Suite("Key order: encoded dictionaries list their keys by UTF-8 bytes")
struct KeyOrderTests {
    /// Keys that share a long prefix or differ only at the end, hold NUL, non-ASCII letters and
    /// emoji, or are empty.
    static let awkwardKeys = [
        "", "a", "ab", "ab\u{0}", "abcdefgh", "abcdefgh\u{0}", "abcdefghi", "abcdefgha", "abcdefg", "abcdefgz",
        "é", "e\u{301}", "zz", "Z", "\u{1F600}", "\u{7F}", "\u{80}", "longer key with spaces", "longer key with space",
    ]

    @Test("the indices come in the order of the keys' UTF-8 bytes, for awkward keys and random ones")
    func sortedByUTF8Bytes() {
        var generator = SeededGenerator(seed: 20)
        var sets = [Self.awkwardKeys]
        for _ in 0..<200 {
            let alphabet = ["a", "b", "é", "\u{0}", "\u{1F600}", "Z"]
            sets.append((0..<Int.random(in: 0...20, using: &generator)).map { _ in
                (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            })
        }
        for keys in sets {
            let entries = Dictionary(keys.map { ($0, SyncValue.null) }, uniquingKeysWith: { first, _ in first })
            let ordered = KeyOrder.sortedIndices(of: entries).map { entries.keys[$0] }
            let expected = entries.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(ordered == expected)
        }
    }
}
