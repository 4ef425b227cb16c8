// swift-tools-version:6.2
//
// libFuzzer targets, one per decoder. Build and run one (docs/codecs.md):
//
//   swift build --package-path Tests/Fuzz -c release -Xswiftc -sanitize=fuzzer,address \
//       -Xswiftc -parse-as-library --product FuzzJSON
//   Tests/Fuzz/.build/release/FuzzJSON -max_total_time=60 -max_len=4096
//
// Each codec target checks that decoding never crashes and that whatever decodes
// re-encodes and decodes to the same value; FuzzIMAP checks that the IMAP
// response framer and parser refuse bad input with an error, never a crash.

import PackageDescription

let fuzzers: [(name: String, module: String)] = [
    ("FuzzJSON", "SyncJSON"),
    ("FuzzXMLPlist", "SyncXMLPlist"),
    ("FuzzBinaryPlist", "SyncBinaryPlist"),
    ("FuzzMessagePack", "SyncMessagePack"),
    ("FuzzIMAP", "SyncIMAP"),
]

let package = Package(
    name: "AnchorageFuzz",
    platforms: [.macOS(.v15)],
    products: fuzzers.map { .executable(name: $0.name, targets: [$0.name]) },
    dependencies: [.package(name: "Anchorage", path: "../..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "SyncCore", package: "Anchorage")])
    ]
        + fuzzers.map {
            .executableTarget(
                name: $0.name,
                dependencies: ["FuzzSupport", .product(name: $0.module, package: "Anchorage")])
        }
)
