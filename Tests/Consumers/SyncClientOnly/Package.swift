// swift-tools-version: 6.1
import PackageDescription

/// An app's side of sync: a SQLite store and the sync client, through their products only.
///
/// `make consumer-check` builds and runs it, then checks that its binary holds no server code — no SwiftNIO,
/// postgres-nio, sync server or HTTP framework — and links no LMDB.
let package = Package(
    name: "SyncClientOnly",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "persistence", path: "../../..")
    ],
    targets: [
        .executableTarget(
            name: "SyncClientConsumer",
            dependencies: [
                .product(name: "PersistenceSQLite", package: "persistence"),
                .product(name: "PersistenceSync", package: "persistence"),
            ]
        )
    ]
)
