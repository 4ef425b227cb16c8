import SyncTesting
import TestSupport

/// Runs Python's `plistlib` (`FMT_BINARY`) as an independent binary plist implementation.
///
/// Values cross between the two sides as ``PlistCanonicalForm`` texts, which
/// the Python script computes the same way from what `plistlib` reads.
enum PythonPlist {
    /// The program; interop tests are enabled by `python.isAvailable()`.
    static let python = PythonProgram(script, requiring: ["plistlib", "struct", "datetime"])

    /// Asks Python to read each file with `plistlib` and compare what it reads with the canonical text beside it.
    static func check(_ pairs: [(file: [UInt8], canonical: String)]) async throws -> PythonCheckReport {
        let input = pairs.map { Hex.encode($0.file) + " " + $0.canonical + "\n" }.joined()
        return try await python.check(["check"], input: Array(input.utf8))
    }

    /// Files written by `plistlib.dumps(…, fmt=FMT_BINARY)` from `count` random values (seeded).
    static func randomFiles(seed: UInt64, count: Int) async throws -> [(file: [UInt8], canonical: String)] {
        try await files(["generate", String(seed), String(count)])
    }

    /// Files written by `plistlib.dumps(…, fmt=FMT_BINARY)` from the script's fixed corpus.
    static func corpusFiles() async throws -> [(file: [UInt8], canonical: String)] {
        try await files(["corpus"])
    }

    /// The file `plistlib` writes for `[None]`, with its null object.
    static func noneFile() async throws -> [UInt8] {
        guard let file = try await files(["none"]).first?.file else { throw PythonFailure("python wrote nothing") }
        return file
    }

    /// The file `plistlib` writes for a dictionary whose two keys, "é" precomposed and
    /// decomposed, are distinct in Python but one key as Swift strings.
    static func equivalentKeysFile() async throws -> [UInt8] {
        guard let file = try await files(["equivalent-keys"]).first?.file else { throw PythonFailure("python wrote nothing") }
        return file
    }

    /// The `<hex file> <canonical>` lines a script command prints.
    private static func files(_ arguments: [String]) async throws -> [(file: [UInt8], canonical: String)] {
        try await python.run(arguments).split(separator: "\n").map { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2 else { throw PythonFailure("unexpected line from python: \(line.prefix(200))") }
            return (try Hex.decode(parts[0]), String(parts[1]))
        }
    }

    /// The Python side. `check` reads `<hex file> <canonical>` lines and prints
    /// `agreed N` plus one line per disagreement; `generate SEED COUNT`,
    /// `corpus`, `none` and `equivalent-keys` print `<hex file> <canonical>` lines of files `plistlib` wrote.
    static let script = #"""
        import datetime, math, plistlib, random, struct, sys

        EPOCH = datetime.datetime(2001, 1, 1)

        def canon(v):
            if v is True: return "T"
            if v is False: return "F"
            if v is None: return "N"
            if isinstance(v, plistlib.UID): return canon({"CF$UID": v.data})
            if isinstance(v, int): return "i%d;" % v
            if isinstance(v, float): return "r" + struct.pack(">d", v).hex()
            if isinstance(v, datetime.datetime):
                return "d" + struct.pack(">d", (v - EPOCH) / datetime.timedelta(seconds=1)).hex()
            if isinstance(v, (bytes, bytearray)): return "x" + bytes(v).hex() + ";"
            if isinstance(v, str): return "s" + v.encode("utf-8").hex() + ";"
            if isinstance(v, list): return "a%d[" % len(v) + "".join(canon(x) for x in v) + "]"
            if isinstance(v, dict):
                items = sorted(v.items(), key=lambda kv: kv[0].encode("utf-8"))
                return "o%d{" % len(v) + "".join(canon(k) + canon(x) for k, x in items) + "}"
            raise TypeError(type(v))

        def check():
            agreed = 0
            for number, line in enumerate(sys.stdin):
                file_hex, expected = line.split()
                try:
                    got = canon(plistlib.loads(bytes.fromhex(file_hex), fmt=plistlib.FMT_BINARY))
                except Exception as error:
                    print("#%d: plistlib failed: %r" % (number, error))
                    continue
                if got == expected: agreed += 1
                else: print("#%d: expected %s got %s" % (number, expected[:300], got[:300]))
            print("agreed %d" % agreed)

        ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,:;/\\\"'<>&=?!@#%+*()[]{}"
        EXOTIC = ["\0", "\x01", "\x7f", "\x80", "é", "ß", "Ω", "ж", "中", "€", "\u2028", "\ufeff", "\ufffd",
                  "😀", "🎉", "𝄞", "\U0010ffff", "e\u0301"]

        def random_string(rng):
            return "".join(rng.choice(EXOTIC) if rng.random() < 0.15 else rng.choice(ALPHABET)
                           for _ in range(rng.randint(0, 20)))

        def random_int(rng):
            kind = rng.randrange(5)
            if kind == 0:
                return rng.choice([0, 1, -1, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, -2**63, 2**63, 2**64 - 1])
            if kind == 1: return rng.randint(-2**63, 2**64 - 1)
            if kind == 2: return rng.randint(2**63, 2**64 - 1)
            return rng.randint(-100000, 100000)

        def random_float(rng):
            kind = rng.randrange(4)
            if kind == 0: return rng.choice([0.0, -0.0, 1.5, math.inf, -math.inf, 5e-324, 1.7976931348623157e308])
            if kind == 1:
                bits = rng.getrandbits(64) & 0x7FEFFFFFFFFFFFFF | (rng.getrandbits(1) << 63)
                return struct.unpack(">d", bits.to_bytes(8, "big"))[0]
            return rng.uniform(-1e6, 1e6)

        def random_value(rng, depth):
            kinds = 9 + (2 if depth < 4 else 0)
            kind = rng.randrange(kinds)
            if kind == 0: return random_string(rng)
            if kind == 1: return random_int(rng)
            if kind == 2: return random_float(rng)
            if kind == 3: return rng.random() < 0.5
            if kind == 4:
                return EPOCH + datetime.timedelta(seconds=rng.randint(-3187296000, 6279811200), microseconds=rng.choice([0, 500000]))
            if kind == 5: return rng.randbytes(rng.randint(0, 40))
            if kind == 6: return plistlib.UID(rng.randint(0, 2**32))
            if kind == 7: return random_string(rng)
            if kind == 8: return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))] if depth < 4 else 0
            if kind == 9: return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))]
            return {random_string(rng): random_value(rng, depth + 1) for _ in range(rng.randint(0, 6))}

        def emit(values, rng=None):
            for value in values:
                sort_keys = True if rng is None else rng.random() < 0.5
                data = plistlib.dumps(value, fmt=plistlib.FMT_BINARY, sort_keys=sort_keys)
                # plistlib uniques 0.0 and -0.0 into one object (they are equal in Python),
                # so the value the file holds is the one plistlib reads back from it.
                print(data.hex(), canon(plistlib.loads(data, fmt=plistlib.FMT_BINARY)))

        CORPUS = [
            0, 1, 14, 15, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, -1, -255, -2**63, 2**63, 2**64 - 1,
            0.0, -0.0, 0.1, 1e300, math.inf, -math.inf, math.nan, 5e-324,
            True, False, "", "a", "\0", "x" * 14, "y" * 15, "z" * 256, "v" * 70000, "é", "e\u0301", "中文", "😀" * 300,
            "\ufeffBOM", b"", b"\0", bytes(range(256)), bytes(70000),
            EPOCH, EPOCH + datetime.timedelta(seconds=-1), EPOCH + datetime.timedelta(seconds=0.5),
            datetime.datetime(1970, 1, 1), datetime.datetime(1900, 1, 1), datetime.datetime(2200, 12, 31, 23, 59, 59),
            plistlib.UID(0), plistlib.UID(255), plistlib.UID(65536), plistlib.UID(2**40),
            [], {}, [[]], [{}], list(range(15)), list(range(300)), ["same"] * 300, [1, 1.0, True, "1", b"1"],
            {"k%d" % i: i for i in range(15)}, {"key%d" % i: "v%d" % (i % 7) for i in range(300)},
            {"é": 1, "e\u0301x": 2, "中": {"😀": [1, [2, [3]]]}},
            {"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(1)},
             "$objects": ["$null", {"name": plistlib.UID(2), "$class": plistlib.UID(3)}, "Ada",
                          {"$classname": "Person", "$classes": ["Person", "NSObject"]}]},
            [{"id": "3F2504E0-%04d" % i, "age": 20 + i, "score": i * 1.25, "active": i % 3 != 0,
              "updated": EPOCH + datetime.timedelta(seconds=700000000 + i * 60), "tags": ["friend", "work"]}
             for i in range(50)],
        ]

        command = sys.argv[1]
        if command == "check": check()
        elif command == "corpus": emit(CORPUS)
        elif command == "none": emit([[None]])
        elif command == "equivalent-keys": emit([{"\u00e9": 1, "e\u0301": 2}])
        elif command == "generate":
            rng = random.Random(int(sys.argv[2]))
            emit([random_value(rng, 0) for _ in range(int(sys.argv[3]))], rng)
        else: raise SystemExit("unknown command " + command)
        """#
}
