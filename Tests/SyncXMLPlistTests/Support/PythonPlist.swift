import SyncTesting
import TestSupport

/// Runs Python's `plistlib` (XML format, read with expat) as an independent
/// XML property list implementation. Values cross in ``CanonicalText`` form.
enum PythonPlist {
    /// The program; interop tests are enabled by `python.isAvailable()`.
    static let python = PythonProgram(script, requiring: ["plistlib", "struct", "datetime"])

    /// Asks Python to read each document with `plistlib.loads` and compare what
    /// it reads with the canonical text given beside it.
    static func check(_ pairs: [(document: [UInt8], canonical: String)]) async throws -> PythonCheckReport {
        let input = pairs.map { Hex.encode($0.document) + " " + $0.canonical + "\n" }.joined()
        return try await python.check(["check"], input: Array(input.utf8))
    }

    /// Asks Python for `count` random values (seeded) written with
    /// `plistlib.dumps(fmt=FMT_XML)`, each with its canonical text.
    static func generate(seed: UInt64, count: Int) async throws -> [(document: [UInt8], canonical: String)] {
        try await python.run(["generate", String(seed), String(count)]).split(separator: "\n").map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { throw PythonFailure("bad line from python: \(line.prefix(100))") }
            return (try Hex.decode(parts[0]), String(parts[1]))
        }
    }

    /// The Python side: `check` reads `<hex document> <canonical text>` lines;
    /// `generate SEED COUNT` prints `<hex document> <canonical text>` lines of
    /// random values written by plistlib. Dates are naive UTC datetimes in plistlib.
    static let script = #"""
        import datetime, math, plistlib, random, struct, sys

        EPOCH = datetime.datetime(1970, 1, 1)

        def text(s):
            return "s" + ".".join(format(ord(c), "x") for c in s) + ";"

        def canon(v):
            if v is True: return "T;"
            if v is False: return "F;"
            if isinstance(v, int): return "i%d;" % v
            if isinstance(v, float):
                return "rnan;" if math.isnan(v) else "r" + struct.pack(">d", v).hex() + ";"
            if isinstance(v, str): return text(v)
            if isinstance(v, datetime.datetime):
                if v.tzinfo is not None: v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
                return "d%d;" % ((v - EPOCH) // datetime.timedelta(seconds=1))
            if isinstance(v, (bytes, bytearray)): return "x" + bytes(v).hex() + ";"
            if isinstance(v, list): return "[" + "".join(canon(x) for x in v) + "]"
            if isinstance(v, dict):
                return "{" + "".join(text(k) + canon(v[k]) for k in sorted(v, key=lambda k: [ord(c) for c in k])) + "}"
            raise TypeError(type(v))

        def check():
            agreed = 0
            for number, line in enumerate(sys.stdin):
                document_hex, expected = line.split()
                document = bytes.fromhex(document_hex)
                try:
                    got = canon(plistlib.loads(document, fmt=plistlib.FMT_XML))
                except Exception as error:
                    print(f"line {number}: python refused {document[:300]!r}: {error!r}")
                    continue
                if got != expected:
                    print(f"line {number}: {document[:300]!r} reads as {got[:300]}, expected {expected[:300]}")
                else:
                    agreed += 1
            print(f"agreed {agreed}")

        SPECIAL = ["\t", "\n", "&", "<", ">", "]]>", '"', "'", "\x7f", "\x80", "\xe9", "\u4e2d", "\u2028", "\ufeff",
                   "\ufffd", "\U0001f600", "\U0001d11e", "\U0010ffff", "&amp;", "<![CDATA[", " "]

        def random_string(r):
            out = []
            for _ in range(r.randint(0, 14)):
                roll = r.random()
                if roll < 0.7: out.append(chr(r.randint(0x20, 0x7e)))
                elif roll < 0.85: out.append(r.choice(SPECIAL))
                else: out.append(chr(r.choice([r.randint(0xa0, 0xd7ff), r.randint(0xe000, 0xfffd), r.randint(0x10000, 0x10ffff)])))
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
                return r.choice([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1e16, 1e-7,
                                 123.0, 1e22, float("inf"), float("-inf"), float("nan")])
            if roll <= 2: return struct.unpack(">d", r.getrandbits(64).to_bytes(8, "big"))[0]
            return r.uniform(-1e6, 1e6)

        FIRST = datetime.datetime(1, 1, 1)
        LAST = datetime.datetime(9999, 12, 31, 23, 59, 59)

        def random_date(r):
            span = (LAST - FIRST) // datetime.timedelta(seconds=1)
            return FIRST + datetime.timedelta(seconds=r.randint(0, span))

        def random_value(r, depth):
            roll = r.randint(0, 9 if depth < 4 else 7)
            if roll == 0: return r.random() < 0.5
            if roll == 1: return random_int(r)
            if roll == 2: return random_float(r)
            if roll == 3: return random_date(r)
            if roll == 4: return r.randbytes(r.randint(0, 100))
            if roll <= 7: return random_string(r)
            if roll == 8: return [random_value(r, depth + 1) for _ in range(r.randint(0, 5))]
            return {random_string(r): random_value(r, depth + 1) for _ in range(r.randint(0, 5))}

        def generate(seed, count):
            r = random.Random(seed)
            for _ in range(count):
                value = random_value(r, 0)
                document = plistlib.dumps(value, fmt=plistlib.FMT_XML, sort_keys=r.random() < 0.5)
                print(document.hex(), canon(value))

        if sys.argv[1] == "check": check()
        else: generate(int(sys.argv[2]), int(sys.argv[3]))
        """#
}
