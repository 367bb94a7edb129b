public import Foundation
public import PersistenceCore
public import Testing

/// A backend under test for the migration suite: opens stores of a model through a migration plan, and shows what
/// a check needs to see of a store beyond its records.
///
/// ```swift
/// extension SQLiteConformance: MigrationConformanceBackend {
///     func builder(named name: String, model: Model, plan: MigrationPlan?,
///                  progress: MigrationProgressHandler?, in directory: URL) throws -> SQLiteBuilder {
///         var builder = SQLiteBuilder(databaseName: name, model: model)
///         builder.directory = directory
///         builder.migrationPlan = plan
///         builder.migrationProgress = progress
///         return builder
///     }
///     // dryRunMigration, migrationReport, tableNames, indexNames, fingerprint…
/// }
///
/// @Test(arguments: MigrationConformanceSuite.checks)
/// func migrationConformance(_ check: MigrationConformanceCheck) async throws {
///     try await check.run(on: SQLiteConformance())
/// }
/// ```
public protocol MigrationConformanceBackend: ConformanceBackend {
    /// The builder the backend opens its stores with.
    associatedtype Builder: MigratingDatabaseBuilder where Builder.Database == Store

    /// A builder of the store named `name` in `directory` at `model`, migrating with `plan` (without one, a
    /// changed model is refused) and reporting to `progress`.
    func builder(
        named name: String, model: Model, plan: MigrationPlan?, progress: MigrationProgressHandler?,
        in directory: URL
    ) throws -> Builder

    /// The builder's dry run: the report of the migration opening would run, with nothing changed.
    func dryRunMigration(_ builder: Builder) throws -> MigrationReport?

    /// The migration opening `store` ran, if any.
    func migrationReport(of store: Store) -> MigrationReport?

    /// The names of the store's tables — its metadata's included, named with the prefix `persistence_` — sorted.
    func tableNames(of store: Store) throws -> [String]

    /// The names of the store's secondary indexes (not the primary keys'), sorted.
    func indexNames(of store: Store) throws -> [String]

    /// Everything the store named `name` holds — its schema and every row — as one comparable value, read while
    /// no database of it is open: a refused or failed migration must leave it equal.
    func fingerprint(named name: String, in directory: URL) throws -> Data
}

/// One named check of the migration suite, run against any ``MigrationConformanceBackend``.
public struct MigrationConformanceCheck: Sendable, CustomTestStringConvertible {
    /// What the check proves, shown as the test's argument.
    public let name: String
    private let body: @Sendable (MigrationStores) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (MigrationStores) async throws -> Void) {
        self.name = name
        self.body = body
    }

    /// Runs the check against `backend` in a fresh temporary directory, removed afterwards — a few at a time, each
    /// on a thread of its own and timed from when it runs, as ``ConformanceCheck/run(on:timeLimit:)`` does.
    /// `PERSISTENCE_CHECKS` focuses on some checks as for ``ConformanceCheck/run(on:timeLimit:)``.
    public func run(on backend: some MigrationConformanceBackend, timeLimit: Duration = .seconds(300)) async throws {
        if let focus = ProcessInfo.processInfo.environment["PERSISTENCE_CHECKS"], !focus.isEmpty,
            !name.localizedCaseInsensitiveContains(focus)
        {
            return
        }
        try await CheckScheduler.shared.run(timeLimit: timeLimit) {
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try await body(MigrationStores(backend: backend, directory: directory))
        }
    }

    /// The check's name.
    public var testDescription: String { name }
}

/// The checks every backend with migrations must pass: inferred steps, mapping models, chains of both, progress,
/// dry runs, failures that leave the store as it was, and user closures that run exactly once.
public enum MigrationConformanceSuite {
    /// Every check, in a stable order: for backends with mapping-model migrations (SQLite, PostgreSQL).
    public static let checks: [MigrationConformanceCheck] =
        declarativeChecks + MappingModelChecks.all + ChainedMigrationChecks.all

    /// What a migration block does, the same on every backend that runs blocks (SQLite, LMDB): Realm's example of
    /// a store's history as one block, objects created and deleted, what a block may not do, failures that leave the
    /// store as it was, dry runs, progress, and a block that runs exactly once.
    public static let blockChecks: [MigrationConformanceCheck] = MigrationBlockChecks.all

    /// What every backend does alone, whatever its migration code looks like: the declarative changes (attributes
    /// added with defaults and removed, attribute and entity renames declared with `previousAttributeNames` /
    /// `previousName`, swaps, optional ↔ required, index and unique changes, widening), what each refuses, dry runs
    /// and reports. A backend without mapping models (LMDB's migration blocks) runs these with `plan` holding no
    /// mappings, and must migrate a store exactly as the SQL backends do: swapping the builder line never changes
    /// what a migration does to data.
    public static let declarativeChecks: [MigrationConformanceCheck] =
        InferredMigrationChecks.all + RelationshipMigrationChecks.all + PendingMigrationChecks.all
        + FullTextMigrationChecks.all + VectorMigrationChecks.all
}

/// A store a check opened, with what the backend shows of it.
struct OpenedStore {
    let database: any Database
    let report: MigrationReport?
    let tableNames: () throws -> [String]
    let indexNames: () throws -> [String]
}

/// What a check sees of a backend: stores opened by name and model, through a plan, in the check's directory.
struct MigrationStores: Sendable {
    let backend: any MigrationConformanceBackend
    let directory: URL

    /// Opens the store `name` at `model`, migrating with `plan` or `block`.
    func open(
        _ name: String, _ model: Model, plan: MigrationPlan? = nil, block: MigrationBlock? = nil,
        progress: MigrationProgressHandler? = nil
    ) throws -> OpenedStore {
        func open<B: MigrationConformanceBackend>(_ backend: B) throws -> OpenedStore {
            var builder = try backend.builder(
                named: name, model: model, plan: plan, progress: progress, in: directory)
            builder.migrationBlock = block
            let store = try builder.create()
            return OpenedStore(
                database: store, report: backend.migrationReport(of: store),
                tableNames: { try backend.tableNames(of: store) }, indexNames: { try backend.indexNames(of: store) })
        }
        return try open(backend)
    }

    /// Opens the store as ``open(_:_:plan:block:progress:)`` does, through the builder's async `open()`.
    func openAsync(
        _ name: String, _ model: Model, plan: MigrationPlan? = nil, block: MigrationBlock? = nil,
        progress: MigrationProgressHandler? = nil
    ) async throws -> MigrationReport? {
        func open<B: MigrationConformanceBackend>(_ backend: B) async throws -> MigrationReport? {
            var builder = try backend.builder(
                named: name, model: model, plan: plan, progress: progress, in: directory)
            builder.migrationBlock = block
            let store = try await builder.open()
            defer { try? store.close() }
            return backend.migrationReport(of: store)
        }
        return try await open(backend)
    }

    /// The dry run of opening the store `name` at `model` with `plan` or `block`.
    func dryRun(
        _ name: String, _ model: Model, plan: MigrationPlan?, block: MigrationBlock? = nil
    ) throws -> MigrationReport? {
        func dryRun<B: MigrationConformanceBackend>(_ backend: B) throws -> MigrationReport? {
            var builder = try backend.builder(named: name, model: model, plan: plan, progress: nil, in: directory)
            builder.migrationBlock = block
            return try backend.dryRunMigration(builder)
        }
        return try dryRun(backend)
    }

    /// The versions of the migration opening the store `name` at `model` would run, read without running it.
    func pendingMigration(_ name: String, _ model: Model) throws -> ClosedRange<Int>? {
        func pending<B: MigrationConformanceBackend>(_ backend: B) throws -> ClosedRange<Int>? {
            try backend.builder(named: name, model: model, plan: nil, progress: nil, in: directory).pendingMigration()
        }
        return try pending(backend)
    }

    /// Whether the store `name` exists, as its builder at `model` sees it.
    func storeExists(_ name: String, _ model: Model) throws -> Bool {
        func exists<B: MigrationConformanceBackend>(_ backend: B) throws -> Bool {
            try backend.builder(named: name, model: model, plan: nil, progress: nil, in: directory).storeExists()
        }
        return try exists(backend)
    }

    /// Copies the store `name` into `destination` through its builder at `model`; `false` for a backend whose
    /// stores aren't files (nothing is copied).
    func copyStore(_ name: String, _ model: Model, into destination: URL) throws -> Bool {
        func copy<B: MigrationConformanceBackend>(_ backend: B) throws -> Bool {
            let builder = try backend.builder(named: name, model: model, plan: nil, progress: nil, in: directory)
            guard let files = builder as? any FileBackedDatabaseBuilder else { return false }
            try files.copyStore(into: destination)
            return true
        }
        return try copy(backend)
    }

    /// The store's schema and rows, with no database of it open.
    func fingerprint(_ name: String) throws -> Data {
        try backend.fingerprint(named: name, in: directory)
    }

    /// The stores in the check's directory.
    func storeNames() throws -> [String] {
        try backend.storeNames(in: directory)
    }

    /// Creates the store `name` at `model` (no plan) and runs `body` on it; the database is closed afterwards.
    func seed(_ name: String, _ model: Model, _ body: (any Database) throws -> Void) throws {
        let store = try open(name, model)
        try body(store.database)
        try store.database.close()
    }
}
