import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// The whole migration suite on LMDB, encrypted and plain, through the builder's `migrationPlan`: the same plans
/// migrate here as on SQLite and PostgreSQL. The declarative checks run a second time without the plan (`plan`
/// dropped: `WithoutPlan`), through LMDB's one-step migration, which must migrate a store as the plan's inferred
/// steps do.
protocol LMDBMigrationConformance: MigrationConformanceBackend where Store == LMDBDatabase, Builder == LMDBBuilder {
    func builder(named name: String, model: Model) -> LMDBBuilder
    /// Whether the builders get the checks' plans.
    var usesPlan: Bool { get }
}

extension LMDBMigrationConformance {
    func builder(
        named name: String, model: Model, plan: MigrationPlan?, progress: MigrationProgressHandler?,
        in directory: URL
    ) throws -> LMDBBuilder {
        var builder = builder(named: name, model: model)
        builder.directory = directory
        builder.migrationProgress = progress
        builder.migrationPlan = usesPlan ? plan : nil
        return builder
    }

    func dryRunMigration(_ builder: LMDBBuilder) throws -> MigrationReport? { try builder.dryRunMigration() }

    func migrationReport(of store: LMDBDatabase) -> MigrationReport? { store.migrationReport }

    /// Entity databases by entity name, and the metadata database as `persistence_meta` (the suite knows metadata
    /// tables by that prefix).
    func tableNames(of store: LMDBDatabase) throws -> [String] {
        try databaseNames(of: store).compactMap { name in
            name.hasPrefix("entity:")
                ? String(name.dropFirst("entity:".count)) : name == "meta" ? "persistence_" + name : nil
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
    var usesPlan: Bool { true }

    func builder(named name: String, model: Model) -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: name, passphrase: "correct horse", model: model)
        builder.keyDerivation = testKeyDerivation
        return builder
    }
}

extension PlainLMDBConformance: LMDBMigrationConformance {
    var usesPlan: Bool { true }

    func builder(named name: String, model: Model) -> LMDBBuilder {
        LMDBBuilder.unencrypted(databaseName: name, model: model)
    }
}

/// LMDB's one-step migration, without a plan.
struct WithoutPlan<Base: LMDBMigrationConformance>: LMDBMigrationConformance {
    typealias Store = LMDBDatabase
    let base: Base
    var usesPlan: Bool { false }

    func open(model: Model, in directory: URL) throws -> LMDBDatabase { try base.open(model: model, in: directory) }

    func builder(named name: String, model: Model) -> LMDBBuilder { base.builder(named: name, model: model) }
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.checks)
func encryptedMigrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: EncryptedLMDBConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.checks)
func plainMigrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: PlainLMDBConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.declarativeChecks)
func encryptedMigrationConformanceWithoutPlan(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: WithoutPlan(base: EncryptedLMDBConformance()))
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.declarativeChecks)
func plainMigrationConformanceWithoutPlan(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: WithoutPlan(base: PlainLMDBConformance()))
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.blockChecks)
func encryptedMigrationBlockConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: EncryptedLMDBConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.blockChecks)
func plainMigrationBlockConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: PlainLMDBConformance())
}
