import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// The migration suite on SQLite: a store is `<name>.sqlite` in the check's directory; backups are off, so the
/// directory holds only what the migration itself leaves.
extension SQLiteConformance: MigrationConformanceBackend {
    func builder(
        named name: String, model: Model, plan: MigrationPlan?, progress: MigrationProgressHandler?,
        in directory: URL
    ) throws -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: name, model: model)
        builder.directory = directory
        builder.migrationPlan = plan
        builder.migrationProgress = progress
        builder.backsUpBeforeHeavyweightMigration = false
        return builder
    }

    func dryRunMigration(_ builder: SQLiteBuilder) throws -> MigrationReport? { try builder.dryRunMigration() }

    func migrationReport(of store: SQLiteDatabase) -> MigrationReport? { store.migrationReport }

    func tableNames(of store: SQLiteDatabase) throws -> [String] {
        try names(store, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    }

    func indexNames(of store: SQLiteDatabase) throws -> [String] {
        try names(store, "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
    }

    private func names(_ store: SQLiteDatabase, _ sql: String) throws -> [String] {
        try store.read { try $0.rows(sql) }.compactMap {
            if case .text(let name)? = $0["name"] { name } else { nil }
        }
    }

    /// The store's file, byte for byte (a closed database has checkpointed its WAL into it).
    func fingerprint(named name: String, in directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("\(name).sqlite"))
    }
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.checks)
func migrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: SQLiteConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.blockChecks)
func migrationBlockConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: SQLiteConformance())
}
