// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares, as in the root package: the house rules on top of Swift 6 mode.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The root package's vendored configuration (its `VendoredLibraries` trait, and what Apple's platforms always build),
/// reduced to what the LMDB backend and its tests need: the same sources (Sources/ and Tests/ here are symbolic links
/// to the root's), one package so the tests keep their `package` and `@testable` access, and none of the PostgreSQL,
/// HTTP, macro or tool targets whose dependencies (SwiftNIO, swift-syntax) a build of the root's test product
/// compiles. CLMDB and CSodium depend on the vendored targets without condition; the vendored targets' settings are
/// the root's, copied (`make vendored-check` fails when the two differ).
///
/// `make vendored-check` builds it in `.build-vendored`, runs the LMDB tests (the conformance suite among them), and
/// checks that the test binary links no liblmdb and no libsodium.
/// As in the root package: the settings below name the platforms.
let applePlatforms: [Platform] = [.macOS, .macCatalyst, .iOS, .tvOS, .watchOS, .visionOS]

let package = Package(
    name: "VendoredLibraries",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
    ],
    targets: [
        .target(name: "CLMDB", dependencies: ["CLMDBVendored"]),
        .target(
            name: "CLMDBVendored",
            exclude: ["README.md", "LICENSE", "patches"],
            cSettings: [.define("MDB_USE_POSIX_SEM", to: "1")]
        ),
        .target(name: "CSodium", dependencies: ["CSodiumVendored"]),
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
        .target(
            name: "PersistenceEngine",
            dependencies: ["PersistenceCore", .product(name: "Tracing", package: "swift-distributed-tracing")],
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
            name: "PersistenceTesting",
            dependencies: ["PersistenceCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(name: "PersistenceTestProcesses", dependencies: ["PersistenceCore"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "LMDBWorker",
            dependencies: ["PersistenceCore", "PersistenceLMDB", "PersistenceTestProcesses", "CLMDB"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PersistenceLMDBTests",
            dependencies: [
                "PersistenceCore", "PersistenceEngine", "PersistenceLMDB", "PersistenceTesting",
                "PersistenceTestProcesses", "LMDBWorker",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
