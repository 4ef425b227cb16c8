import SyncTesting
import TestSupport

/// Runs Python's `json` module as an independent JSON implementation.
///
/// Values cross between the two sides in a canonical form that does not depend
/// on either side's JSON writer: strings as lists of code points, integers as
/// decimal strings, reals as the hex of their IEEE 754 bits (so they compare
/// exactly, `-0.0` included), objects as entry lists sorted by key.
enum PythonJSON {
    /// The program; interop tests are enabled by `python.isAvailable()`.
    static let python = PythonProgram(script, requiring: ["json", "struct"])

    /// Asks Python to read each JSON text and compare what it reads with the
    /// canonical form given beside it.
    /// - Parameter pairs: a JSON text and the canonical form (itself JSON) of the value it should hold.
    static func check(_ pairs: [(text: [UInt8], canonical: [UInt8])]) async throws -> PythonCheckReport {
        var input: [UInt8] = []
        for (text, canonical) in pairs {
            Hex.append(text, to: &input)
            input.append(UInt8(ascii: " "))
            Hex.append(canonical, to: &input)
            input.append(UInt8(ascii: "\n"))
        }
        return try await python.check(["check"], input: input)
    }

    /// Asks Python whether each text is exactly what `json.dumps` writes for the
    /// value it holds with sorted keys, compact separators and raw UTF-8 (with
    /// U+2028 and U+2029 escaped, as we do).
    static func checkSameBytes(_ texts: [[UInt8]]) async throws -> PythonCheckReport {
        var input: [UInt8] = []
        for text in texts {
            Hex.append(text, to: &input)
            input.append(UInt8(ascii: "\n"))
        }
        return try await python.check(["same-bytes"], input: input)
    }

    /// JSON texts written by Python's `json.dumps` from `count` random values
    /// (seeded), in a random mix of its output styles.
    static func generate(seed: UInt64, count: Int) async throws -> [[UInt8]] {
        try await python.hexLines(["generate", String(seed), String(count)])
    }

    /// The Python side: `check` reads `<hex text> <hex canonical>` lines;
    /// `generate SEED COUNT` prints hex-encoded `json.dumps` output of random values.
    static let script = #"""
        import json, random, struct, sys

        def canon(v):
            if v is None: return ["n"]
            if v is True or v is False: return ["b", v]
            if isinstance(v, int): return ["i", str(v)]
            if isinstance(v, float): return ["r", struct.pack(">d", v).hex()]
            if isinstance(v, str): return ["s", [ord(c) for c in v]]
            if isinstance(v, list): return ["a", [canon(x) for x in v]]
            if isinstance(v, dict): return ["o", sorted([[ord(c) for c in k], canon(x)] for k, x in v.items())]
            raise TypeError(type(v))

        def normal(c):
            if c[0] == "a": return ["a", [normal(x) for x in c[1]]]
            if c[0] == "o": return ["o", sorted([k, normal(x)] for k, x in c[1])]
            return c

        def no_duplicates(pairs):
            keys = [k for k, _ in pairs]
            if len(set(keys)) != len(keys): raise ValueError("duplicate key")
            return dict(pairs)

        def check():
            agreed = 0
            for number, line in enumerate(sys.stdin):
                text_hex, canonical_hex = line.split()
                text = bytes.fromhex(text_hex)
                try:
                    got = canon(json.loads(text.decode("utf-8"), object_pairs_hook=no_duplicates))
                except Exception as error:
                    print(f"line {number}: python refused {text[:200]!r}: {error}")
                    continue
                expected = normal(json.loads(bytes.fromhex(canonical_hex).decode("utf-8")))
                if got != expected:
                    print(f"line {number}: {text[:200]!r} reads as {json.dumps(got)[:300]}, expected {json.dumps(expected)[:300]}")
                else:
                    agreed += 1
            print(f"agreed {agreed}")

        def same_bytes():
            agreed = 0
            for number, line in enumerate(sys.stdin):
                text = bytes.fromhex(line.strip())
                value = json.loads(text.decode("utf-8"))
                ours = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                ours = ours.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode("utf-8")
                if ours != text:
                    print(f"line {number}: we wrote {text[:200]!r}, python writes {ours[:200]!r}")
                else:
                    agreed += 1
            print(f"agreed {agreed}")

        SPECIAL_CHARS = ['\x00', '\x01', '\x08', '\x1f', '\x7f', '\x80', '\xe9', '\xdf', '\u4e2d', '\u2028', '\u2029',
                         '\ufeff', '\uffff', '\U0001f600', '\U0001d11e', '\U0010ffff', '"', '\\', '/', '\n', '\t', '\r']

        def random_string(r):
            out = []
            for _ in range(r.randint(0, 14)):
                roll = r.random()
                if roll < 0.7: out.append(chr(r.randint(0x20, 0x7e)))
                elif roll < 0.85: out.append(r.choice(SPECIAL_CHARS))
                else: out.append(chr(r.choice([r.randint(0x80, 0xd7ff), r.randint(0xe000, 0x10ffff)])))
            return "".join(out)

        def random_int(r):
            roll = r.randint(0, 4)
            if roll == 0: return r.choice([0, -1, 1, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**53 + 1, -2**53 - 1])
            if roll == 1: return r.randint(-2**63, 2**64 - 1)
            if roll == 2: return r.randint(2**63, 2**64 - 1)
            return r.randint(-100000, 100000)

        def random_float(r):
            roll = r.randint(0, 4)
            if roll == 0:
                return r.choice([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308,
                                 1.7976931348623157e308, 0.1, 1e16, 1e15, 1e-5, 1e-7, 123.0, 1e22, 1e23, 9007199254740993.0])
            if roll <= 2:
                while True:
                    value = struct.unpack(">d", r.getrandbits(64).to_bytes(8, "big"))[0]
                    if value == value and value not in (float("inf"), float("-inf")): return value
            return r.uniform(-1e6, 1e6)

        def random_value(r, depth):
            roll = r.randint(0, 9 if depth < 4 else 6)
            if roll == 0: return None
            if roll == 1: return r.random() < 0.5
            if roll == 2: return random_int(r)
            if roll == 3: return random_float(r)
            if roll <= 6: return random_string(r)
            if roll <= 8: return [random_value(r, depth + 1) for _ in range(r.randint(0, 5))]
            return {random_string(r): random_value(r, depth + 1) for _ in range(r.randint(0, 5))}

        STYLES = [{}, {"ensure_ascii": False}, {"indent": 2}, {"indent": "\t", "ensure_ascii": False},
                  {"separators": (",", ":")}, {"sort_keys": True, "indent": 0}]

        def generate(seed, count):
            r = random.Random(seed)
            for _ in range(count):
                value = random_value(r, 0)
                print(json.dumps(value, **r.choice(STYLES)).encode("utf-8").hex())

        if sys.argv[1] == "check": check()
        elif sys.argv[1] == "same-bytes": same_bytes()
        else: generate(int(sys.argv[2]), int(sys.argv[3]))
        """#
}
