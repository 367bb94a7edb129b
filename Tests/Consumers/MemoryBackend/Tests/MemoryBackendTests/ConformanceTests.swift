import Foundation
import MemoryBackend
import PersistenceCore
import PersistenceTesting
import Testing

/// Opens in-memory databases for the conformance suite. Its stores are not files: each directory the suite makes
/// names a namespace of stores in the process's memory.
struct MemoryConformance: ConformanceBackend {
    var storesAreFiles: Bool { false }

    func open(model: Model, in directory: URL) throws -> MemoryDatabase {
        var builder = MemoryBuilder(databaseName: "Conformance", model: model)
        builder.directory = directory
        return try builder.create()
    }

    func storeNames(in directory: URL) throws -> [String] { try MemoryDatabase.storeNames(in: directory) }

    func deleteStore(named name: String, in directory: URL) throws -> Bool {
        try MemoryDatabase.deleteStore(named: name, in: directory)
    }
}

@Test(.timeLimit(.minutes(30)), arguments: ConformanceSuite.checks)
func conformance(_ check: ConformanceCheck) async throws {
    try await check.run(on: MemoryConformance())
}
