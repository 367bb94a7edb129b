// swift-tools-version: 6.1
import PackageDescription

/// A package that uses Persistence the way a server app does: through the PostgreSQL backend product only.
///
/// `make consumer-check` builds it, runs it against a throw-away server, then checks that its binary links neither
/// LMDB nor SQLite and holds none of their code: depending on the PostgreSQL backend must not pull in another
/// backend's libraries.
let package = Package(
    name: "PostgresOnly",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        .package(name: "persistence", path: "../../..")
    ],
    targets: [
        .executableTarget(
            name: "PostgresOnlyConsumer",
            dependencies: [
                .product(name: "PersistencePostgres", package: "persistence")
            ]
        )
    ]
)
