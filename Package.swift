// swift-tools-version:6.2
//
// Anchorage: data synchronization from interchangeable parts.
//
// One library product per backend, so an app that picks JSON and the memory
// store links neither libxml2, msgpack-c, GRDB nor PostgreSQL; an HTTP client
// links no server, and no library product links the test kit. Every target
// depends on exactly the modules its Swift files import
// (scripts/check-dependencies.py checks it).

import PackageDescription

/// Apple's platforms the libraries are written for (Package.swift's `platforms` says which versions).
let applePlatforms: [Platform] = [.macOS, .iOS]

let package = Package(
    name: "Anchorage",
    // macOS 15 and iOS 18: the first with Swift 6's Synchronization (Mutex), which every module uses.
    // tvOS, watchOS and visionOS are left out: nothing here is tested for them, and watchOS has no
    // sockets for the HTTP client. Linux needs no entry. Each product's platforms: README.md.
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "SyncCore", targets: ["SyncCore"]),
        .library(name: "SyncJSON", targets: ["SyncJSON"]),
        .library(name: "SyncXMLPlist", targets: ["SyncXMLPlist"]),
        .library(name: "SyncBinaryPlist", targets: ["SyncBinaryPlist"]),
        .library(name: "SyncMessagePack", targets: ["SyncMessagePack"]),
        .library(name: "SyncHTTP", targets: ["SyncHTTP"]),
        .library(name: "SyncHTTPClient", targets: ["SyncHTTPClient"]),
        .library(name: "SyncHTTPServer", targets: ["SyncHTTPServer"]),
        .library(name: "SyncSQLite", targets: ["SyncSQLite"]),
        .library(name: "SyncPostgres", targets: ["SyncPostgres"]),
        .library(name: "Aquasync", targets: ["Aquasync"]),
        .library(name: "AppSync", targets: ["AppSync"]),
        .library(name: "OTASync", targets: ["OTASync"]),
        .library(name: "SyncPush", targets: ["SyncPush"]),
        .library(name: "SyncConsole", targets: ["SyncConsole"]),
        .library(name: "FileSync", targets: ["FileSync"]),
        .library(name: "SyncIMAP", targets: ["SyncIMAP"]),
        .library(name: "SyncMail", targets: ["SyncMail"]),
        .library(name: "SyncMailPush", targets: ["SyncMailPush"]),
        .library(name: "SyncTesting", targets: ["SyncTesting"]),
        .library(name: "SyncSamples", targets: ["SyncSamples"]),
        .executable(name: "anchorage", targets: ["anchorage"]),
        .plugin(name: "CodecReport", targets: ["CodecReport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // `swift package generate-documentation --target SyncCore` (CI runs it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: Core
        .target(
            name: "SyncCore",
            dependencies: [
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]),

        // MARK: Codecs
        .target(name: "SyncJSON", dependencies: ["SyncCore"]),
        .target(name: "SyncBinaryPlist", dependencies: ["SyncCore"]),
        // libxml2: on Linux the system library (libxml2-dev), through a C shim for its macros; Apple's
        // SDKs have it as the Clang module `libxml2` (the Swift files import that there).
        .systemLibrary(
            name: "CAnchorageXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]),
        .target(
            name: "SyncXMLPlist",
            dependencies: ["SyncCore", .target(name: "CAnchorageXML2", condition: .when(platforms: [.linux]))],
            linkerSettings: [.linkedLibrary("xml2", .when(platforms: applePlatforms))]),
        // msgpack-c: on Linux the system library (libmsgpack-dev); on Apple's platforms, which have no
        // system package of it, its own C sources (CMsgPack, msgpack-c 4.0.0, Boost licence).
        .systemLibrary(
            name: "CAnchorageMsgPack", pkgConfig: "msgpack",
            providers: [.apt(["libmsgpack-dev"])]),
        .target(
            name: "CMsgPack", exclude: ["COPYING", "LICENSE_1_0.txt", "NOTICE"], publicHeadersPath: "include"),
        .target(
            name: "CAnchorageMsgPackShim",
            dependencies: [
                .target(name: "CAnchorageMsgPack", condition: .when(platforms: [.linux])),
                .target(name: "CMsgPack", condition: .when(platforms: applePlatforms)),
            ],
            linkerSettings: [.linkedLibrary("msgpackc", .when(platforms: [.linux]))]),
        .target(name: "SyncMessagePack", dependencies: ["SyncCore", "CAnchorageMsgPackShim"]),

        // MARK: Transports
        // What HTTP's client and server share: the headers' formats (Authorization, the session cookie,
        // Retry-After), content codings, TLS certificate files, and connection failures in plain words
        // (which the IMAP client says too).
        .target(
            name: "SyncHTTP",
            dependencies: [
                "SyncCore",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The client transport, over AsyncHTTPClient: no server.
        .target(
            name: "SyncHTTPClient",
            dependencies: [
                "SyncCore", "SyncHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // The server, over Hummingbird: no HTTP client.
        .target(
            name: "SyncHTTPServer",
            dependencies: [
                "SyncCore", "SyncHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // MARK: Stores
        .target(
            name: "SyncSQLite",
            dependencies: [
                "SyncCore", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .target(
            name: "SyncPostgres",
            dependencies: [
                "SyncCore", "SyncJSON", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ]),

        // A writer the SQLite crash test kills at random moments.
        .executableTarget(name: "StoreCrashWriter", dependencies: ["SyncCore", "SyncSQLite"]),

        // MARK: Stacks
        .target(name: "Aquasync", dependencies: ["SyncCore"]),
        .target(name: "AppSync", dependencies: ["SyncCore"]),
        .target(name: "OTASync", dependencies: ["SyncCore"]),

        // MARK: Push: the push server mounted in `anchorage serve`, and the device's push client
        .target(
            name: "SyncPush",
            dependencies: [
                "SyncCore", "SyncHTTP", "SyncHTTPServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),

        // MARK: The operator console `anchorage serve --console` shows: its JSON API, and its page compiled in
        .target(
            name: "SyncConsole",
            dependencies: [
                "SyncCore", "SyncHTTPServer", "SyncPush",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.embedInCode("Assets")]),

        // MARK: File sync: a WebDAV client and a local folder kept in sync through the journal
        .target(
            name: "FileSync",
            dependencies: [
                "SyncCore", "SyncHTTP", "SyncHTTPClient",
                .target(name: "CAnchorageXML2", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            linkerSettings: [.linkedLibrary("xml2", .when(platforms: applePlatforms))]),

        // MARK: Mail: an IMAP client of its own, notes kept in a mailbox, and the data access daemon
        .target(
            name: "SyncIMAP",
            dependencies: [
                "SyncCore", "SyncHTTP",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // Notes kept in a mailbox, over the IMAP client.
        .target(name: "SyncMail", dependencies: ["SyncCore", "SyncIMAP"]),
        // The device's mail push daemon: the IMAP client and the push client.
        .target(name: "SyncMailPush", dependencies: ["SyncCore", "SyncIMAP", "SyncPush"]),

        // MARK: Testing kit shipped to users
        .target(name: "SyncTesting", dependencies: ["SyncCore"]),

        // MARK: Sample data for benchmarks, the size report and the docs
        .target(name: "SyncSamples", dependencies: ["SyncCore"]),

        // MARK: Command-line tool
        .executableTarget(
            name: "anchorage",
            dependencies: [
                "SyncCore", "SyncJSON", "SyncXMLPlist", "SyncBinaryPlist", "SyncMessagePack", "SyncHTTP",
                "SyncHTTPClient", "SyncHTTPServer", "SyncSQLite", "SyncPostgres", "Aquasync", "AppSync", "OTASync",
                "SyncSamples", "SyncPush", "SyncConsole", "FileSync", "SyncIMAP", "SyncMail", "SyncMailPush",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),

        // MARK: Command plugin: the codec size table and chart in docs/
        .plugin(
            name: "CodecReport",
            capability: .command(
                intent: .custom(
                    verb: "codec-report",
                    description: "Build anchorage (release) and write docs/codec-sizes-table.md and docs/codec-sizes.svg"),
                permissions: [.writeToPackageDirectory(reason: "Writes the codec size table and chart into docs/")]),
            dependencies: ["anchorage"]),

        // MARK: Tests
        // What the test targets share: Python as an independent implementation, hex, the four
        // codecs, temporary folders, the built `anchorage` tool, and `TransportRoute` (one test body
        // in process and over HTTP).
        .target(
            name: "TestSupport",
            dependencies: [
                "SyncCore", "SyncTesting", "SyncJSON", "SyncXMLPlist", "SyncBinaryPlist", "SyncMessagePack",
                "SyncHTTPClient", "SyncHTTPServer",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"),
        .testTarget(name: "SyncCoreTests", dependencies: ["SyncCore", "SyncTesting"]),
        .testTarget(name: "SyncTestingTests", dependencies: ["SyncCore", "SyncTesting"]),
        .testTarget(name: "SyncJSONTests", dependencies: ["SyncCore", "SyncJSON", "SyncTesting", "TestSupport"]),
        .testTarget(name: "SyncXMLPlistTests", dependencies: ["SyncCore", "SyncXMLPlist", "SyncTesting", "TestSupport"]),
        .testTarget(name: "SyncBinaryPlistTests", dependencies: ["SyncCore", "SyncBinaryPlist", "SyncTesting", "TestSupport"]),
        .testTarget(
            name: "SyncMessagePackTests",
            dependencies: ["SyncCore", "SyncMessagePack", "SyncSamples", "SyncTesting", "SyncJSON", "TestSupport"]),
        .testTarget(
            name: "SyncSQLiteTests",
            dependencies: [
                "SyncCore", "SyncSQLite", "SyncTesting", "StoreCrashWriter", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "AquasyncTests",
            dependencies: [
                "SyncCore", "Aquasync", "SyncTesting", "SyncJSON", "SyncMessagePack", "SyncXMLPlist", "SyncBinaryPlist",
                "SyncSQLite", "TestSupport",
            ]
        ),
        .testTarget(
            name: "CodecConversionTests",
            dependencies: [
                "SyncCore", "SyncTesting", "SyncJSON", "SyncXMLPlist", "SyncBinaryPlist", "SyncMessagePack", "anchorage",
            ]),
        .testTarget(
            name: "ConsoleTests",
            dependencies: [
                "SyncCore", "SyncConsole", "SyncHTTPServer", "SyncHTTPClient", "SyncTesting", "anchorage", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .testTarget(
            name: "CommandLineTests",
            dependencies: [
                "SyncCore", "SyncTesting", "SyncHTTPClient", "SyncHTTPServer", "SyncJSON", "Aquasync", "anchorage",
                "TestSupport",
            ]),
        .testTarget(
            name: "SyncPostgresTests",
            dependencies: [
                "SyncCore", "SyncPostgres", "SyncTesting", "Aquasync", "AppSync", "OTASync", "SyncHTTPClient", "SyncJSON",
                "SyncMessagePack", "anchorage", "TestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "OTASyncTests",
            dependencies: [
                "SyncCore", "OTASync", "SyncTesting", "SyncJSON", "SyncMessagePack", "SyncXMLPlist", "SyncBinaryPlist",
                "SyncSQLite", "TestSupport",
            ]
        ),
        .testTarget(
            name: "CrashMatrixTests",
            dependencies: [
                "SyncCore", "SyncSQLite", "SyncJSON", "Aquasync", "AppSync", "OTASync", "SyncTesting", "TestSupport",
                "anchorage",
            ]),
        .testTarget(
            name: "AppSyncTests",
            dependencies: ["SyncCore", "AppSync", "SyncTesting", "SyncJSON", "SyncSQLite", "SyncHTTPClient", "TestSupport"]
        ),
        .testTarget(
            name: "SyncPushTests",
            dependencies: [
                "SyncCore", "SyncPush", "SyncHTTPClient", "SyncHTTPServer", "SyncTesting", "SyncJSON", "SyncSQLite",
                "Aquasync", "AppSync", "OTASync", "anchorage", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),
        .testTarget(
            name: "FileSyncTests",
            dependencies: [
                "SyncCore", "FileSync", "SyncHTTPClient", "SyncHTTPServer", "SyncTesting", "anchorage", "TestSupport",
            ]),
        .testTarget(
            name: "SyncMailTests",
            dependencies: [
                "SyncCore", "SyncIMAP", "SyncMail", "SyncMailPush", "SyncPush", "SyncHTTPClient", "SyncHTTPServer",
                "SyncTesting", "SyncSQLite", "SyncJSON", "anchorage", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(
            name: "SyncHTTPTests",
            dependencies: [
                "SyncCore", "SyncJSON", "SyncHTTP", "SyncHTTPClient", "SyncHTTPServer", "SyncTesting", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Examples (docs/custom-stack.md): a fourth stack written only through the public API, and
        // the README's first example. Targets of this package, so CI builds them with everything else.
        .target(name: "NotesStack", dependencies: ["SyncCore"], path: "Examples/NotesStack/Sources"),
        .testTarget(
            name: "NotesStackTests",
            dependencies: ["NotesStack", "SyncCore", "SyncTesting", "SyncJSON", "TestSupport"],
            path: "Examples/NotesStack/Tests"),
        .executableTarget(
            name: "QuickStart", dependencies: ["Aquasync", "SyncCore", "SyncJSON"], path: "Examples/QuickStart"),
        .testTarget(
            name: "QuickStartTests",
            dependencies: [
                "QuickStart", "SyncTesting", "Aquasync", "SyncCore", "SyncJSON", "SyncHTTPClient", "SyncHTTPServer",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            path: "Examples/QuickStartTests"),
    ]
)

// Strict settings for every target of ours: Swift 6 mode comes with the tools
// version; these upcoming features keep the code explicit.
for target in package.targets where [.regular, .executable, .test].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
