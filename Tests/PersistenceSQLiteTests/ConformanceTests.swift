import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// Opens SQLite databases for the conformance suite.
struct SQLiteConformance: ConformanceBackend {
    func open(model: Model, in directory: URL) throws -> SQLiteDatabase {
        var builder = SQLiteBuilder(databaseName: "Conformance", model: model)
        builder.directory = directory
        return try builder.create()
    }
}

@Test(.timeLimit(.minutes(30)), arguments: ConformanceSuite.checks)
func conformance(_ check: ConformanceCheck) async throws {
    try await check.run(on: SQLiteConformance())
}
