// swift-tools-version: 6.1
//
// Anchorage's benchmarks: a package of its own, so that the library never
// depends on the benchmark harness. Run from this folder:
//
//     swift package benchmark                 # ordo-one/benchmark suites
//     swift run -c release codec-ratios       # speed ratios against the peers

import PackageDescription

let package = Package(
    name: "AnchorageBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Anchorage", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // MARK: C peers
        .target(name: "CMsgPackPeer", linkerSettings: [.linkedLibrary("msgpackc")]),
        .target(
            name: "CXMLPeer",
            cSettings: [.unsafeFlags(["-I/usr/include/libxml2"], .when(platforms: [.linux]))],
            linkerSettings: [.linkedLibrary("xml2")]),

        // MARK: Shapes and peers shared by the suites and the ratio report
        .target(
            name: "BenchmarkShapes",
            dependencies: [
                "CMsgPackPeer", "CXMLPeer",
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncXMLPlist", package: "Anchorage"),
                .product(name: "SyncBinaryPlist", package: "Anchorage"),
                .product(name: "SyncMessagePack", package: "Anchorage"),
                .product(name: "SyncSamples", package: "Anchorage"),
            ]),

        // MARK: ordo-one/benchmark suites
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: [
                "BenchmarkShapes",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncXMLPlist", package: "Anchorage"),
                .product(name: "SyncBinaryPlist", package: "Anchorage"),
                .product(name: "SyncMessagePack", package: "Anchorage"),
            ],
            path: "CodecBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        .executableTarget(
            name: "StoreBenchmarks",
            dependencies: [
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncSQLite", package: "Anchorage"),
                .product(name: "SyncPostgres", package: "Anchorage"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "StoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),

        // MARK: `anchorage serve` as a child process, for the load and fan-out benchmarks
        .target(
            name: "BenchmarkServers",
            dependencies: [
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncHTTPServer", package: "Anchorage"),
            ]),

        // MARK: The ratio report
        .executableTarget(name: "codec-ratios", dependencies: ["BenchmarkShapes"]),

        // MARK: Push: a change on one device applied on another, and fan-out to many devices
        .executableTarget(
            name: "push-latency",
            dependencies: [
                "BenchmarkServers",
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncHTTPClient", package: "Anchorage"),
                .product(name: "SyncHTTPServer", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncSQLite", package: "Anchorage"),
                .product(name: "SyncPush", package: "Anchorage"),
                .product(name: "Aquasync", package: "Anchorage"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // MARK: Push fan-out: one write notifying thousands of WebSocket clients of another process
        .executableTarget(
            name: "push-fanout",
            dependencies: [
                "BenchmarkServers",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]),

        // MARK: Mail: a note saved on one device, on another through Dovecot's hook and the push server
        .executableTarget(
            name: "mail-latency",
            dependencies: [
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncHTTPClient", package: "Anchorage"),
                .product(name: "SyncHTTPServer", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncSQLite", package: "Anchorage"),
                .product(name: "SyncPush", package: "Anchorage"),
                .product(name: "SyncIMAP", package: "Anchorage"),
                .product(name: "SyncMail", package: "Anchorage"),
                .product(name: "SyncMailPush", package: "Anchorage"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // MARK: Incremental cost: a 10-edit sync after 1,000 and after 100,000 records, in every stack
        .executableTarget(
            name: "incremental-sync",
            dependencies: [
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncSQLite", package: "Anchorage"),
                .product(name: "Aquasync", package: "Anchorage"),
                .product(name: "AppSync", package: "Anchorage"),
                .product(name: "OTASync", package: "Anchorage"),
            ]),

        // MARK: Load: fast syncs of many devices, bulk upload and pull, import (performance.sh runs it with Kinto)
        .executableTarget(
            name: "sync-load",
            dependencies: [
                "BenchmarkServers",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SyncCore", package: "Anchorage"),
                .product(name: "SyncJSON", package: "Anchorage"),
                .product(name: "SyncSamples", package: "Anchorage"),
            ]),
    ]
)

for target in package.targets where [.regular, .executable].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
