// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares, as in the root package: the house rules on top of Swift 6 mode.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// A backend written outside the library, as an outside author writes one: an in-memory store built on the backend
/// kit (the product `PersistenceBackendKit`: the engine, with the core's backend SPI) and nothing else of ours, proved
/// by the whole conformance suite.
///
/// `make memory-backend-check` runs its tests in the root's `.build`, so the library's modules compile once.
let package = Package(
    name: "MemoryBackend",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "MemoryBackend", targets: ["MemoryBackend"])
    ],
    dependencies: [
        .package(name: "persistence", path: "../../..")
    ],
    targets: [
        .target(
            name: "MemoryBackend",
            dependencies: [
                .product(name: "PersistenceBackendKit", package: "persistence")
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MemoryBackendTests",
            dependencies: [
                "MemoryBackend",
                .product(name: "PersistenceCore", package: "persistence"),
                .product(name: "PersistenceTesting", package: "persistence"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
