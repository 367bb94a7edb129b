// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

/// Settings every target shares: Swift 6 mode comes from the tools version; these add the house rules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Apple's platforms have no liblmdb or libsodium in their SDKs: they always build the vendored sources, with no trait
/// to set (Xcode can't set a dependency's traits).
let applePlatforms: [Platform] = [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS]
/// Everywhere else the system's libraries by default (the `SystemLibraries` trait, on by default), the vendored ones
/// with `VendoredLibraries`. Conditions, never `#if os()`: the manifest is evaluated on the build machine, which is
/// not the target when cross-compiling.
let otherPlatforms: [Platform] = [.linux, .android, .windows, .openbsd, .wasi]

let package = Package(
    name: "persistence",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "PersistenceCore", targets: ["PersistenceCore"]),
        .library(name: "PersistenceSQLite", targets: ["PersistenceSQLite"]),
        .library(name: "PersistenceLMDB", targets: ["PersistenceLMDB"]),
        .library(name: "PersistencePostgres", targets: ["PersistencePostgres"]),
        .library(name: "PersistenceTesting", targets: ["PersistenceTesting"]),
        // What a backend written in another package builds on: the engine and the core's backend SPI (see
        // ImplementingABackend). Apps never need it.
        .library(name: "PersistenceBackendKit", targets: ["PersistenceBackendKit"]),
        // Sync: the embedded side (links no server code) and the server side (links no LMDB) apart.
        .library(name: "PersistenceSync", targets: ["PersistenceSync"]),
        .library(name: "PersistenceSyncServer", targets: ["PersistenceSyncServer"]),
        // Sync over HTTP: the client transport (async-http-client) and the server's Hummingbird handler, apart.
        .library(name: "PersistenceSyncHTTP", targets: ["PersistenceSyncHTTP"]),
        .library(name: "PersistenceSyncHummingbird", targets: ["PersistenceSyncHummingbird"]),
        // `@Entity`: an app that doesn't import it doesn't build swift-syntax.
        .library(name: "PersistenceMacros", targets: ["PersistenceMacros"]),
        // `migrate`, `verify` and `export` an app adds to its own executable, with its model and migrations.
        .library(name: "PersistenceCommands", targets: ["PersistenceCommands"]),
        .executable(name: "persistence", targets: ["persistence"]),
    ],
    traits: [
        .trait(
            name: "SystemLibraries",
            description: "Link the system's liblmdb and libsodium (pkg-config) on platforms other than Apple's."
        ),
        .trait(
            name: "VendoredLibraries",
            description: """
                Compile the vendored LMDB 0.9 (POSIX semaphores, as on Apple) and libsodium instead of the system's \
                libraries on platforms other than Apple's (use it alone: `--traits VendoredLibraries`).
                """
        ),
        .default(enabledTraits: ["SystemLibraries"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // 3.x and 4.x share the API used here (Crypto, _CryptoExtras' KDF.Scrypt): the LMDB store's scrypt and key
        // wrapping, and its portable AES-GCM on CPUs where libsodium has none.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The ecosystem's logging and metrics APIs (no backends, no system libraries): opt-in on every builder.
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        // Spans for transactions and migrations, opt-in like logging and metrics (the API only; no exporter).
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // PostgreSQL's wire protocol on SwiftNIO: only PersistencePostgres depends on it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Sync over HTTP: the server handler mounts in Hummingbird, the client transport runs on async-http-client.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),
        // The `@Entity` macro's compiler plugin: only PersistenceMacros depends on it.
        .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"700.0.0"),
    ],
    targets: [
        // C libraries: system packages, never products, imported `internal` by the one backend that uses each.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // LMDB and libsodium: PersistenceLMDB imports CLMDB and CSodium, small C targets that depend on exactly one
        // provider each, the system's library or the vendored sources (Sources/*Vendored/README.md: versions, origin,
        // patches, licences).
        .target(
            name: "CLMDB",
            dependencies: [
                .target(name: "CLMDBSystem", condition: .when(platforms: otherPlatforms, traits: ["SystemLibraries"])),
                .target(name: "CLMDBVendored", condition: .when(platforms: applePlatforms)),
                .target(name: "CVendored", condition: .when(platforms: otherPlatforms, traits: ["VendoredLibraries"])),
            ]
        ),
        .systemLibrary(
            name: "CLMDBSystem",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // LMDB 0.9 (the release branch: POSIX semaphores on Apple, where the sandbox forbids SysV ones) with POSIX
        // semaphores everywhere, so Linux runs Apple's locking path, and a patch (a semaphore-name prefix; a mark in
        // the lock file's format on Linux, where other builds lock with mutexes).
        .target(
            name: "CLMDBVendored",
            exclude: ["README.md", "LICENSE", "patches"],
            cSettings: [.define("MDB_USE_POSIX_SEM", to: "1")]
        ),
        // The encrypted LMDB store's AEADs, Argon2id and keyed hashes, with guarded key memory.
        .target(
            name: "CSodium",
            dependencies: [
                .target(
                    name: "CSodiumSystem", condition: .when(platforms: otherPlatforms, traits: ["SystemLibraries"])),
                .target(name: "CSodiumVendored", condition: .when(platforms: applePlatforms)),
                .target(name: "CVendored", condition: .when(platforms: otherPlatforms, traits: ["VendoredLibraries"])),
            ]
        ),
        // The vendored libraries where the trait asks for them: a dependency can't be declared twice with two
        // conditions (Apple's platforms, or the trait elsewhere), so CLMDB and CSodium reach them through this target.
        .target(name: "CVendored", dependencies: ["CLMDBVendored", "CSodiumVendored"]),
        .systemLibrary(
            name: "CSodiumSystem",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        // libsodium's configure-time macros: the operating system's here, the CPU's in config/ (a macOS universal
        // build compiles both architectures with these same settings).
        .target(
            name: "CSodiumVendored",
            exclude: ["README.md", "LICENSE"],
            cSettings: [
                .headerSearchPath("include/sodium"),
                .headerSearchPath("config"),
                .define("SODIUM_STATIC", to: "1"),
                .define("HAVE_INLINE_ASM", to: "1"),
                .define("HAVE_ATOMIC_OPS", to: "1"),
                .define("HAVE_C11_MEMORY_FENCES", to: "1"),
                .define("HAVE_GCC_MEMORY_FENCES", to: "1"),
                // POSIX, both kinds of system: guarded pages for sodium_malloc, locking, the clock.
                .define("HAVE_SYS_MMAN_H", to: "1"),
                .define("HAVE_SYS_PARAM_H", to: "1"),
                .define("HAVE_MMAP", to: "1"),
                .define("HAVE_MPROTECT", to: "1"),
                .define("HAVE_MLOCK", to: "1"),
                .define("HAVE_MADVISE", to: "1"),
                .define("HAVE_POSIX_MEMALIGN", to: "1"),
                .define("HAVE_SYSCONF", to: "1"),
                .define("HAVE_RAISE", to: "1"),
                .define("HAVE_NANOSLEEP", to: "1"),
                .define("HAVE_CLOCK_GETTIME", to: "1"),
                .define("HAVE_GETPID", to: "1"),
                .define("HAVE_PTHREAD", to: "1"),
                .define("HAVE_WEAK_SYMBOLS", to: "1"),
                .define("HAVE_SYS_RANDOM_H", to: "1"),
                // Linux (glibc): getrandom(2), getauxval for the ARM CPU features, explicit_bzero.
                .define("_GNU_SOURCE", to: "1", .when(platforms: [.linux, .android])),
                .define("HAVE_GETRANDOM", to: "1", .when(platforms: [.linux, .android])),
                .define("HAVE_SYS_AUXV_H", to: "1", .when(platforms: [.linux, .android])),
                .define("HAVE_GETAUXVAL", to: "1", .when(platforms: [.linux, .android])),
                .define("HAVE_EXPLICIT_BZERO", to: "1", .when(platforms: [.linux])),
                // Apple: arc4random_buf (randombytes), getentropy, memset_s.
                .define("HAVE_ARC4RANDOM", to: "1", .when(platforms: applePlatforms)),
                .define("HAVE_ARC4RANDOM_BUF", to: "1", .when(platforms: applePlatforms)),
                .define("HAVE_GETENTROPY", to: "1", .when(platforms: applePlatforms)),
                .define("HAVE_MEMSET_S", to: "1", .when(platforms: applePlatforms)),
            ]
        ),

        .target(
            name: "PersistenceCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The engine every backend runs on (not a product): the transaction driver, writer locks and slots, connection
        // pools, transaction runners and worker threads, the store gate and store files. Apart from the users' API;
        // a backend imports it `internal`, so nothing of it reaches an app.
        .target(
            name: "PersistenceEngine",
            dependencies: ["PersistenceCore", .product(name: "Tracing", package: "swift-distributed-tracing")],
            swiftSettings: swiftSettings
        ),
        // The backend kit: the engine re-exported for a package that implements a backend outside this one.
        .target(
            name: "PersistenceBackendKit",
            dependencies: ["PersistenceCore", "PersistenceEngine"],
            swiftSettings: swiftSettings
        ),
        // What the SQL backends share and the others don't need (not a product): the condition compiler, identifier
        // quoting, the copy statement of a migration step.
        .target(
            name: "PersistenceSQL",
            dependencies: ["PersistenceCore"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceSQLite",
            dependencies: [
                "PersistenceCore", "PersistenceEngine", "PersistenceSQL", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceLMDB",
            dependencies: [
                "PersistenceCore", "PersistenceEngine",
                "CLMDB",
                "CSodium",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistencePostgres",
            dependencies: [
                "PersistenceCore", "PersistenceEngine",
                "PersistenceSQL",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // The backend-neutral content digest (not a product): the store tool's `hash`, and sync's convergence check on
        // both sides. swift-crypto's SHA-256 (CryptoKit on Apple's platforms).
        .target(
            name: "PersistenceContentHash",
            dependencies: ["PersistenceCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // The sync client of an embedded store and the protocol's wire types: core only, any embedded backend.
        .target(
            name: "PersistenceSync",
            dependencies: ["PersistenceCore", "PersistenceContentHash"],
            swiftSettings: swiftSettings
        ),
        // The sync server on a PostgreSQL store: its change log, push and pull, conflict policies, and the direct
        // transport.
        .target(
            name: "PersistenceSyncServer",
            dependencies: ["PersistenceCore", "PersistenceSync", "PersistencePostgres", "PersistenceSQL"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceSyncHTTP",
            dependencies: [
                "PersistenceCore", "PersistenceSync",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceSyncHummingbird",
            dependencies: [
                "PersistenceCore", "PersistenceSync", "PersistenceSyncServer",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // `@Entity` writes an entity's record code at compile time: the macro's plugin, and the library that declares
        // it (its own product, so apps that don't use it never build swift-syntax).
        .macro(
            name: "PersistenceMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftParser", package: "swift-syntax"),
                .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceMacros",
            dependencies: ["PersistenceCore", "PersistenceMacrosPlugin"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceTesting",
            dependencies: ["PersistenceCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // The tests' process harnesses (a built executable run as a user runs it, the reliability worker, a PostgreSQL
        // server of a test's own): Foundation's `Process`, which iOS-family SDKs lack, kept out of the public suite so
        // that it builds there. Not a product.
        .target(
            name: "PersistenceTestProcesses",
            dependencies: ["PersistenceCore"],
            swiftSettings: swiftSettings
        ),
        // The commands an app embeds (`migrate`, `verify`, `export` through its own builder), and what the store
        // tool shares with them (locators, passphrases, progress, exit statuses, export formats). Links no backend:
        // the app's builder brings the one it uses.
        .target(
            name: "PersistenceCommands",
            dependencies: [
                "PersistenceCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // The store tool's workings (stores opened through their stored schema, the content hash, maintenance): the
        // `persistence` executable's commands call it; not a product.
        .target(
            name: "PersistenceTool",
            dependencies: [
                "PersistenceCore", "PersistenceEngine",
                "PersistenceCommands",
                "PersistenceLMDB",
                "PersistenceSQLite",
                "PersistencePostgres",
                "PersistenceContentHash",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "persistence",
            dependencies: [
                "PersistenceCore", "PersistenceEngine",
                "PersistenceLMDB",
                "PersistenceSQLite",
                "PersistencePostgres",
                "PersistenceCommands",
                "PersistenceTool", "PersistenceContentHash",
                // The demo's sync step: a server with its HTTP handler and two clients, in one process.
                "PersistenceSync", "PersistenceSyncServer", "PersistenceSyncHTTP", "PersistenceSyncHummingbird",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // An app's store executable made with PersistenceCommands (a notes model at version 2 with its migrations,
        // on SQLite, encrypted LMDB and PostgreSQL): the embedded commands' tests run it. Not a product.
        .executableTarget(
            name: "NotesStore",
            dependencies: [
                "PersistenceCommands", "PersistenceSQLite", "PersistenceLMDB", "PersistencePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Reliability: a worker the kill -9 and bit-flip tests run as a child process, and the decoders' fuzz
        // dispatch shared by the deterministic test and the libFuzzer binary (`make fuzz`). Not products.
        .executableTarget(
            name: "ReliabilityWorker",
            dependencies: [
                "PersistenceCore",
                "PersistenceLMDB",
                "PersistenceSQLite",
                "PersistencePostgres",
                "PersistenceSync",
                "PersistenceSyncServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // Another process on an LMDB store, for the LMDB suite's multi-process tests; the LMDB backend alone, so the
        // vendored configuration (Tests/Vendored) builds it too. Not a product.
        .executableTarget(
            name: "LMDBWorker",
            dependencies: ["PersistenceCore", "PersistenceLMDB", "PersistenceTestProcesses", "CLMDB"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PersistenceFuzzing",
            dependencies: ["PersistenceCore", "PersistenceLMDB"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PersistenceFuzzer",
            dependencies: ["PersistenceFuzzing"],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "PersistencePostgresTests",
            dependencies: [
                "PersistenceTestProcesses",
                "PersistenceCore", "PersistencePostgres", "PersistenceTesting", "ReliabilityWorker",
                // The migration written once and run on every backend (MigrationOnEveryBackendTests).
                "PersistenceSQLite", "PersistenceLMDB",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceSyncTests",
            dependencies: [
                "PersistenceTestProcesses",
                "PersistenceCore", "PersistenceSync", "PersistenceSyncServer", "PersistencePostgres",
                "PersistenceSQLite", "PersistenceLMDB", "PersistenceTesting", "PersistenceSyncHTTP",
                "PersistenceSyncHummingbird", "ReliabilityWorker",
                // The store tool's `sync-verify` against a server of a test's own.
                "persistence",
                .product(name: "Hummingbird", package: "hummingbird"),
                // Requests in each wire form, written by hand.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceToolTests",
            dependencies: [
                "PersistenceTestProcesses",
                "persistence", "PersistenceTool", "PersistenceCommands", "PersistenceCore", "PersistenceEngine",
                "PersistenceLMDB",
                "PersistenceSQLite",
                "PersistenceTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceCommandsTests",
            dependencies: [
                "PersistenceTestProcesses",
                "NotesStore", "PersistenceCommands", "PersistenceCore", "PersistenceSQLite", "PersistenceLMDB",
                "PersistencePostgres", "PersistenceTesting",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceMacrosTests",
            dependencies: [
                "PersistenceCore", "PersistenceMacros", "PersistenceMacrosPlugin", "PersistenceSQLite",
                "PersistenceLMDB",
                "PersistenceTesting",
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceCoreTests",
            dependencies: ["PersistenceCore", "PersistenceEngine"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceSQLiteTests",
            dependencies: [
                "PersistenceCore", "PersistenceEngine", "PersistenceSQLite", "PersistenceTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceLMDBTests",
            dependencies: [
                "PersistenceCore", "PersistenceEngine", "PersistenceLMDB", "PersistenceTesting",
                // The multi-process tests run the worker as a child process: SwiftPM builds it first.
                "PersistenceTestProcesses", "LMDBWorker",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            // Stores written by earlier versions; the tests read them from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // Depends on the worker so that SwiftPM builds its binary first; the tests run it as a child process.
        .testTarget(
            name: "PersistenceReliabilityTests",
            dependencies: [
                "PersistenceTestProcesses",
                "ReliabilityWorker", "PersistenceFuzzing", "PersistenceCore", "PersistenceLMDB", "PersistenceSQLite",
                "PersistenceTesting",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
