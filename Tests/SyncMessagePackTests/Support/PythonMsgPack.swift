import SyncCore
import SyncJSON
import SyncTesting
import TestSupport

/// Runs Python's `msgpack` package as an independent MessagePack implementation.
///
/// Values cross between the two sides in the canonical form of
/// ``MessagePackCanonicalForm``, written as JSON, which depends on neither
/// side's MessagePack code.
enum PythonMsgPack {
    /// The program; interop tests are enabled by `python.isAvailable()`.
    static let python = PythonProgram(script, requiring: ["msgpack", "json", "struct"])

    /// One item for ``check(_:)``: MessagePack bytes and the canonical form of the value they should hold.
    struct Expectation {
        /// The MessagePack bytes Python reads with `msgpack.unpackb`.
        var bytes: [UInt8]
        /// The canonical form of the expected value.
        var canonical: SyncValue
        /// Whether a timestamp may differ from the canonical one by the
        /// precision of a `Date` (half a unit in the last place of its `Double`).
        var datesApproximate = false
    }

    /// Asks Python to read each item's bytes with `unpackb(raw=False,
    /// strict_map_key=False)` and compare the result with the item's canonical
    /// form, twice: with `timestamp=0` (`msgpack.Timestamp`, exact to the
    /// nanosecond) and with `timestamp=3` (`datetime`, to the microsecond,
    /// when every date is in the years 1 to 9999).
    static func check(_ expectations: [Expectation]) async throws -> PythonCheckReport {
        let json = JSONCodec()
        var input: [UInt8] = []
        for expectation in expectations {
            Hex.append(expectation.bytes, to: &input)
            input.append(UInt8(ascii: " "))
            Hex.append(try json.encode(expectation.canonical), to: &input)
            input += Array((expectation.datesApproximate ? " approximate\n" : " exact\n").utf8)
        }
        return try await python.check(["check"], input: input)
    }

    /// What `msgpack.packb(value, use_bin_type=True, datetime=True)` writes for
    /// each canonical value, with map keys inserted in the order of their UTF-8 bytes.
    static func pack(_ canonicals: [SyncValue]) async throws -> [[UInt8]] {
        let json = JSONCodec()
        var input: [UInt8] = []
        for canonical in canonicals {
            Hex.append(try json.encode(canonical), to: &input)
            input.append(UInt8(ascii: "\n"))
        }
        return try await python.hexLines(["pack"], input: input)
    }

    /// MessagePack written by Python from `count` random values (seeded):
    /// every type, every length form, float32 now and then, datetimes and
    /// timestamps with nanoseconds.
    static func generate(seed: UInt64, count: Int) async throws -> [[UInt8]] {
        try await python.hexLines(["generate", String(seed), String(count)])
    }

    /// MessagePack written by Python from its fixed corpus: the boundaries of
    /// every length form and integer width, float32, every timestamp form.
    static func corpus() async throws -> [[UInt8]] {
        try await python.hexLines(["corpus"])
    }

    /// The Python side. `check` reads `<hex msgpack> <hex canonical JSON> exact|approximate`
    /// lines; `pack` reads `<hex canonical JSON>` lines and prints hex `packb` output;
    /// `generate SEED COUNT` and `corpus` print hex `packb` output.
    static let script = #"""
        import datetime, json, math, random, struct, sys
        import msgpack
        from msgpack import Timestamp

        EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        DATETIME_SECONDS = range(-62135596800, 253402300800)  # 0001-01-01 ... 9999-12-31, what a datetime holds

        def unpack(data, timestamp):
            def no_duplicates(pairs):
                keys = [k for k, _ in pairs]
                if len(set(keys)) != len(keys): raise ValueError("duplicate key")
                return dict(pairs)
            return msgpack.unpackb(data, timestamp=timestamp, raw=False, strict_map_key=False,
                                   object_pairs_hook=no_duplicates)

        def canon(v):
            if v is None: return ["n"]
            if v is True or v is False: return ["b", v]
            if isinstance(v, int): return ["i", str(v)]
            if isinstance(v, float): return ["r", struct.pack(">d", v).hex()]
            if isinstance(v, str): return ["s", [ord(c) for c in v]]
            if isinstance(v, bytes): return ["d", v.hex()]
            if isinstance(v, Timestamp): return ["t", str(v.seconds), v.nanoseconds]
            if isinstance(v, datetime.datetime):
                delta = v - EPOCH
                return ["t", str(delta.days * 86400 + delta.seconds), delta.microseconds * 1000]
            if isinstance(v, list): return ["a", [canon(x) for x in v]]
            if isinstance(v, dict):
                if not all(isinstance(k, str) for k in v): raise TypeError("a map key is not a str")
                return ["o", sorted([[ord(c) for c in k], canon(x)] for k, x in v.items())]
            raise TypeError(type(v))

        def same(got, expected, approximate, microseconds):
            """Whether two canonical forms agree; with `microseconds`, `got` comes
            from a datetime, which keeps a timestamp's microseconds (rounded down)."""
            if got[0] != expected[0]: return False
            kind = got[0]
            if kind == "a":
                return len(got[1]) == len(expected[1]) and all(
                    same(g, e, approximate, microseconds) for g, e in zip(got[1], expected[1]))
            if kind == "o":
                g, e = sorted(got[1]), sorted(expected[1])
                return len(g) == len(e) and all(
                    a[0] == b[0] and same(a[1], b[1], approximate, microseconds) for a, b in zip(g, e))
            if kind == "t":
                seconds, nanoseconds = int(expected[1]), expected[2]
                difference = abs((int(got[1]) - seconds) * 10**9 + got[2] - nanoseconds)
                tolerance = 0
                if approximate: tolerance += math.ulp(float(abs(seconds - 978307200)) + 1.0) * 1e9 / 2 + 2
                if microseconds: tolerance += 1000
                return difference <= tolerance
            return got == expected

        def dates_fit_datetime(c):
            if c[0] == "t": return int(c[1]) in DATETIME_SECONDS
            if c[0] == "a": return all(dates_fit_datetime(x) for x in c[1])
            if c[0] == "o": return all(dates_fit_datetime(x[1]) for x in c[1])
            return True

        def check():
            """Reads each line's bytes twice: with timestamp=0 (msgpack.Timestamp,
            exact to the nanosecond) and with timestamp=3 (datetime.datetime, to
            the microsecond; only when every date fits a datetime)."""
            agreed = 0
            for number, line in enumerate(sys.stdin):
                data_hex, canonical_hex, mode = line.split()
                data = bytes.fromhex(data_hex)
                expected = json.loads(bytes.fromhex(canonical_hex).decode("utf-8"))
                approximate = mode == "approximate"
                try:
                    exact = canon(unpack(data, 0))
                    as_datetime = canon(unpack(data, 3)) if dates_fit_datetime(exact) else exact
                except Exception as error:
                    print(f"line {number}: python refused {data[:100].hex()}: {error!r}")
                    continue
                if not same(exact, expected, approximate, False):
                    print(f"line {number}: {data[:100].hex()} reads as {json.dumps(exact)[:300]}, expected {json.dumps(expected)[:300]}")
                elif not same(as_datetime, expected, approximate, True):
                    print(f"line {number}: {data[:100].hex()} reads with datetimes as {json.dumps(as_datetime)[:300]}, expected {json.dumps(expected)[:300]}")
                else:
                    agreed += 1
            print(f"agreed {agreed}")

        def build(c):
            kind = c[0]
            if kind == "n": return None
            if kind == "b": return c[1]
            if kind == "i": return int(c[1])
            if kind == "r": return struct.unpack(">d", bytes.fromhex(c[1]))[0]
            if kind == "s": return "".join(map(chr, c[1]))
            if kind == "d": return bytes.fromhex(c[1])
            if kind == "t": return Timestamp(int(c[1]), c[2])
            if kind == "a": return [build(x) for x in c[1]]
            if kind == "o":
                entries = [("".join(map(chr, k)), build(v)) for k, v in c[1]]
                return dict(sorted(entries, key=lambda entry: entry[0].encode("utf-8")))
            raise ValueError(kind)

        def pack():
            for line in sys.stdin:
                value = build(json.loads(bytes.fromhex(line.strip()).decode("utf-8")))
                print(msgpack.packb(value, use_bin_type=True, datetime=True).hex())

        SPECIAL_CHARS = ['\x00', '\x01', '\x1f', '\x7f', '\x80', '\xe9', '\xdf', '\u4e2d', '\u2028', '\ufeff',
                         '\uffff', '\U0001f600', '\U0001d11e', '\U0010ffff', '"', '\\']

        def random_string(r):
            out = []
            length = r.choice([r.randint(0, 12), r.randint(0, 12), r.randint(28, 40), r.randint(250, 300)])
            for _ in range(length):
                roll = r.random()
                if roll < 0.75: out.append(chr(r.randint(0x20, 0x7e)))
                elif roll < 0.9: out.append(r.choice(SPECIAL_CHARS))
                else: out.append(chr(r.choice([r.randint(0x80, 0xd7ff), r.randint(0xe000, 0x10ffff)])))
            return "".join(out)

        def random_int(r):
            roll = r.randint(0, 4)
            if roll == 0:
                return r.choice([0, -1, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, -32, -33, -128, -129,
                                 -32768, -32769, -2**31, -2**31 - 1, 2**63 - 1, -2**63, 2**63, 2**64 - 1])
            if roll == 1: return r.randint(-2**63, 2**64 - 1)
            if roll == 2: return r.randint(2**63, 2**64 - 1)
            return r.randint(-100000, 100000)

        def random_float(r):
            roll = r.randint(0, 4)
            if roll == 0:
                return r.choice([0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1.5, float("inf"), float("-inf"),
                                 float("nan"), 1e300, -2.5e-8])
            if roll <= 2: return struct.unpack(">d", r.getrandbits(64).to_bytes(8, "big"))[0]
            return r.uniform(-1e6, 1e6)

        UTC = datetime.timezone.utc

        def random_date(r):
            roll = r.randint(0, 3)
            if roll == 0:
                days = r.randint(0, 3652058)
                return datetime.datetime(1, 1, 1, tzinfo=UTC) + datetime.timedelta(days=days, seconds=r.randint(0, 86399),
                                                                                 microseconds=r.randint(0, 999999))
            if roll == 1: return Timestamp(r.randint(0, 2**32 - 1), 0)
            if roll == 2: return Timestamp(r.randint(0, 2**34 - 1), r.randint(0, 999999999))
            return Timestamp(r.randint(-2**40, 2**40), r.randint(0, 999999999))

        def random_value(r, depth):
            roll = r.randint(0, 12 if depth < 4 else 8)
            if roll == 0: return None
            if roll == 1: return r.random() < 0.5
            if roll == 2: return random_int(r)
            if roll == 3: return random_float(r)
            if roll <= 5: return random_string(r)
            if roll == 6: return bytes(r.getrandbits(8) for _ in range(r.choice([r.randint(0, 20), r.randint(250, 300)])))
            if roll <= 8: return random_date(r)
            if roll <= 10: return [random_value(r, depth + 1) for _ in range(container_length(r, depth))]
            return {random_string(r): random_value(r, depth + 1) for _ in range(container_length(r, depth))}

        def container_length(r, depth):
            # The 16-entry forms (array 16, map 16) at the top only, so a value stays a few kilobytes.
            return r.choice([r.randint(0, 5), r.randint(14, 20)]) if depth == 0 else r.randint(0, 4)

        def generate(seed, count):
            r = random.Random(seed)
            for _ in range(count):
                value = random_value(r, 0)
                try:
                    packed = msgpack.packb(value, use_bin_type=True, datetime=True, use_single_float=r.random() < 0.2)
                except OverflowError:  # a float64 beyond float32's range
                    packed = msgpack.packb(value, use_bin_type=True, datetime=True)
                print(packed.hex())

        def corpus():
            values = [
                None, True, False, 0, 1, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1,
                -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63,
                0.0, -0.0, 1.5, 0.1, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"),
                "", "a" * 31, "a" * 32, "b" * 255, "c" * 256, "d" * 65535, "e" * 65536, "é中😀\x00\U0010ffff",
                b"", b"\x00" * 255, b"\x01" * 256, b"\x02" * 65535, b"\x03" * 65536,
                [], list(range(15)), list(range(16)), list(range(65535)), list(range(65536)),
                {}, {str(i): i for i in range(15)}, {str(i): i for i in range(16)}, {str(i): None for i in range(65536)},
                Timestamp(0, 0), Timestamp(2**32 - 1, 0), Timestamp(2**32, 0), Timestamp(0, 1), Timestamp(2**34 - 1, 999999999),
                Timestamp(2**34, 0), Timestamp(-1, 0), Timestamp(-1, 500000000), Timestamp(-62135596800, 0),
                Timestamp(253402300799, 999999999), Timestamp(978307200, 1), Timestamp(978307200, 123456789),
                datetime.datetime(1970, 1, 1, tzinfo=UTC), datetime.datetime(1900, 1, 1, tzinfo=UTC),
                datetime.datetime(2024, 5, 1, 12, 30, 0, 123456, tzinfo=UTC),
                datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), datetime.datetime(1, 1, 1, tzinfo=UTC),
                {"header": {"version": "1.0", "sequence": 7, "final": True, "msisdn": None},
                 "body": [{"name": "sync-start", "params": {"uri": "com.apple.Contacts"}}, [1, -2, 3.5, b"\xff", []]],
                 "": {}, "é": [[[[]]]]},
            ]
            for value in values:
                print(msgpack.packb(value, use_bin_type=True, datetime=True).hex())
            for value in [1.5, 0.1, float("inf"), float("nan"), -0.0, 3.4028234663852886e38, 1e-45, [0.25, {"f": 2.5}]]:
                print(msgpack.packb(value, use_bin_type=True, use_single_float=True).hex())

        command = sys.argv[1]
        if command == "check": check()
        elif command == "pack": pack()
        elif command == "corpus": corpus()
        else: generate(int(sys.argv[2]), int(sys.argv[3]))
        """#
}
