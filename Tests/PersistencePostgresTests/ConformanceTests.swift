import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceTesting
import Testing

/// Opens PostgreSQL databases for the conformance suite: each temporary directory the suite makes stands for its
/// own schema on the test server, so checks never see each other's stores.
struct PostgresConformance: ConformanceBackend {
    var storesAreFiles: Bool { false }

    func open(model: Model, in directory: URL) throws -> PostgresDatabase {
        var builder = try PostgresBuilder(url: serverURL(), model: model)
        builder.schema = Self.prefix(directory) + "Conformance"
        return try builder.create()
    }

    func storeNames(in directory: URL) throws -> [String] {
        let prefix = Self.prefix(directory)
        return try builder(schema: "public", entities: [Probe.self]).storeNames()
            .filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    func deleteStore(named name: String, in directory: URL) throws -> Bool {
        try builder(schema: Self.prefix(directory) + name, entities: [Probe.self]).deleteStore()
    }

    private func builder(schema: String, entities: [any Entity.Type]) throws -> PostgresBuilder {
        var builder = try PostgresBuilder(url: serverURL(), model: Model(version: 1, entities: entities))
        builder.schema = schema
        return builder
    }

    /// `t<hash of the directory>_`: a schema-name prefix per directory.
    static func prefix(_ directory: URL) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in directory.standardizedFileURL.path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return "t" + String(hash, radix: 16) + "_"
    }
}

@Test(.timeLimit(.minutes(30)), arguments: ConformanceSuite.checks)
func conformance(_ check: ConformanceCheck) async throws {
    try await check.run(on: PostgresConformance())
}
