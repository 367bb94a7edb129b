import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// The declarative part of the migration suite on LMDB, encrypted and plain: the same model migrates here as on
/// SQLite and PostgreSQL. LMDB has no mapping models — its code is a migration block — so a plan holding mappings is
/// refused, and the plan's model list is not needed: a store is migrated from the schema stored in it.
protocol LMDBMigrationConformance: MigrationConformanceBackend where Store == LMDBDatabase, Builder == LMDBBuilder {
    func builder(named name: String, model: Model) -> LMDBBuilder
}

extension LMDBMigrationConformance {
    func builder(
        named name: String, model: Model, plan: MigrationPlan?, progress: MigrationProgressHandler?,
        in directory: URL
    ) throws -> LMDBBuilder {
        guard plan?.mappings.isEmpty ?? true else {
            throw PersistenceError(.invalidConfiguration, "LMDB migrates with a migration block, not mapping models")
        }
        var builder = builder(named: name, model: model)
        builder.directory = directory
        builder.migrationProgress = progress
        return builder
    }

    func dryRunMigration(_ builder: LMDBBuilder) throws -> MigrationReport? { try builder.dryRunMigration() }

    func migrationReport(of store: LMDBDatabase) -> MigrationReport? { store.migrationReport }

    /// Entity databases by entity name, and the metadata database.
    func tableNames(of store: LMDBDatabase) throws -> [String] {
        try databaseNames(of: store).compactMap { name in
            name.hasPrefix("entity:") ? String(name.dropFirst("entity:".count)) : name == "meta" ? name : nil
        }.sorted()
    }

    func indexNames(of store: LMDBDatabase) throws -> [String] {
        try databaseNames(of: store).filter { $0.hasPrefix("index:") }.map { String($0.dropFirst("index:".count)) }
            .sorted()
    }

    /// The logical names of the store's databases (a migration's databases are named for it; see `DatabaseNames`).
    private func databaseNames(of store: LMDBDatabase) throws -> [String] {
        try store.environment.read { transaction in
            let names = try DatabaseNames.read(store.metaDBI, transaction)
            return try transaction.databaseNames().map(names.logical)
        }
    }

    /// The store's data file, byte for byte.
    func fingerprint(named name: String, in directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("\(name).lmdb"))
    }
}

extension EncryptedLMDBConformance: LMDBMigrationConformance {
    func builder(named name: String, model: Model) -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: name, passphrase: "correct horse", model: model)
        builder.keyDerivation = testKeyDerivation
        return builder
    }
}

extension PlainLMDBConformance: LMDBMigrationConformance {
    func builder(named name: String, model: Model) -> LMDBBuilder {
        LMDBBuilder.unencrypted(databaseName: name, model: model)
    }
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.declarativeChecks)
func encryptedMigrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: EncryptedLMDBConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.declarativeChecks)
func plainMigrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: PlainLMDBConformance())
}
