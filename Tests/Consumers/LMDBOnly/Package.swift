// swift-tools-version: 6.1
import PackageDescription

/// A package that uses Persistence the way an app does: through one backend product only.
///
/// `make consumer-check` builds and runs it, then checks that its binary does not link SQLite: depending on the LMDB
/// backend must not pull in another backend's system library.
let package = Package(
    name: "LMDBOnly",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "persistence", path: "../../..")
    ],
    targets: [
        .executableTarget(
            name: "LMDBOnlyConsumer",
            dependencies: [
                .product(name: "PersistenceLMDB", package: "persistence")
            ]
        )
    ]
)
