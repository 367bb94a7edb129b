// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares: Swift 6 mode comes from the tools version; these add the house rules.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Persistence against the raw C APIs and GRDB, in one run on one machine.
///
/// A package of its own, so `swift test` at the repository root never builds GRDB or the benchmark tooling.
/// `compare` prints the side-by-side table (`make compare`); `PersistenceBenchmarks` holds the per-operation suites
/// with allocation counts (`make benchmark`).
let package = Package(
    name: "PersistenceBenchmarks",
    platforms: [.macOS(.v15)],
    // The root's LMDB and libsodium providers, passed on: the system's by default, the vendored ones (what Apple's
    // platforms build) with `--traits VendoredLibraries` (`make compare-vendored`: L1, L4, L6 and K on both).
    traits: [
        .trait(name: "SystemLibraries", description: "The root package's default: the system's liblmdb and libsodium."),
        .trait(name: "VendoredLibraries", description: "The root package's vendored LMDB and libsodium."),
        .default(enabledTraits: ["SystemLibraries"]),
    ],
    dependencies: [
        .package(
            name: "persistence", path: "..",
            traits: [
                .trait(name: "SystemLibraries", condition: .when(traits: ["SystemLibraries"])),
                .trait(name: "VendoredLibraries", condition: .when(traits: ["VendoredLibraries"])),
            ]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The RuntimeInterposer trait (on by default) pulls in a package that is not needed for these metrics.
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The raw baseline of the P workloads: PostgreSQL's wire protocol, as PersistencePostgres uses it.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // The Y workloads' HTTP transport: the sync handler mounted in a Hummingbird app of the run's own.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
    ],
    targets: [
        // The C APIs themselves, for the raw baselines. Named apart from the root's CSQLite/CLMDB and GRDB's
        // GRDBSQLite, so no two modules of the build share a name.
        .systemLibrary(
            name: "RawSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "RawLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),

        // Marks each timed operation for callgrind (`make instructions`); no-ops outside valgrind.
        .target(name: "CallgrindMarkers"),
        // V1's baseline: nearest neighbours by a plain C loop over floats in memory.
        .target(name: "RawVectors", cSettings: [.unsafeFlags(["-O2"])]),
        .target(
            name: "Workloads",
            dependencies: [
                "CallgrindMarkers",
                "RawVectors",
                "RawSQLite",
                "RawLMDB",
                .product(name: "PersistenceSQLite", package: "persistence"),
                .product(name: "PersistenceLMDB", package: "persistence"),
                .product(name: "PersistencePostgres", package: "persistence"),
                .product(name: "PersistenceSync", package: "persistence"),
                .product(name: "PersistenceSyncServer", package: "persistence"),
                .product(name: "PersistenceSyncHTTP", package: "persistence"),
                .product(name: "PersistenceSyncHummingbird", package: "persistence"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // D1's `@Entity` row: the macro's product (and so swift-syntax) only here, not in the library's build.
                .product(name: "PersistenceMacros", package: "persistence"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "compare",
            dependencies: [
                "Workloads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "PersistenceBenchmarks",
            dependencies: [
                "Workloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/PersistenceBenchmarks",
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
