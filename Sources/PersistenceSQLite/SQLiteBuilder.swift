public import CoreMetrics
public import Foundation
public import Logging
// Apps import one module: the backend brings the core's protocols and types with it.
@_exported public import PersistenceCore
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
public import Tracing

/// Builds a ``SQLiteDatabase``: validates the configuration, then opens or creates the store.
///
/// ```swift
/// let db = try SQLiteBuilder(databaseName: "App", model: Model(version: 1, entities: [User.self])).create()
/// ```
///
/// The store is one SQLite file, `<directory>/<databaseName>.sqlite` (with `-wal` and `-shm` beside it while
/// open), in WAL mode: one serialized writer and a pool of readers, so a long write never blocks reads.
public struct SQLiteBuilder: FileBackedDatabaseBuilder {
    /// How hard SQLite syncs to disk at commit.
    public enum Synchronous: String, Sendable, Hashable {
        /// Every commit is durable when `write` returns, even through a power loss (SQLite's `FULL`).
        case full = "FULL"
        /// Commits survive an application crash; the last ones may be lost on power loss (SQLite's `NORMAL`).
        case normal = "NORMAL"
    }

    /// The database name: the file-name stem. Not empty, no path separators, no `..`.
    public var databaseName: String
    /// The entity types and model version.
    public var model: Model
    /// Where the store's files go; `nil` for a per-user default (Application Support on Apple platforms,
    /// `$XDG_DATA_HOME` or `~/.local/share` on Linux, in a folder named after the program). A given directory must
    /// exist and be writable.
    public var directory: URL?
    /// Keep the store in memory only (it vanishes with the database). Conflicts with ``directory``.
    /// An in-memory store has one connection, so its reads and writes take turns.
    public var inMemory = false
    /// How many read-only connections may run reads at once (1…64).
    public var maximumReaders = 4
    /// How long to wait for another process's lock before failing with `PersistenceError/Code/busy`.
    public var busyTimeout: Duration = .seconds(5)
    /// Durability at commit.
    public var synchronous: Synchronous = .full
    /// How many bytes of stored vectors nearest-neighbour queries may keep copied in memory, for all vector
    /// attributes together (256 MiB by default; 0 keeps none).
    ///
    /// A nearest query that ranks every record of an entity in a read copies the vectors it read (4 bytes a
    /// dimension, and the keys); the next ones rank the copy, about twice as fast, while no commit — of this
    /// database, another one on the file or another process — has changed the store since. The first query after
    /// a change reads the store again. An attribute whose vectors pass the limit is never copied; a query with a
    /// condition always reads the store.
    public var maximumVectorCacheBytes = 256 << 20
    /// The model versions the app shipped before ``model`` and the mapping models between them: how ``create()``
    /// migrates a store written with an older version, step by step (see ``MigrationPlan``).
    ///
    /// Without a plan, a store of an older version migrates in one inferred step to ``model``, or is refused with
    /// `PersistenceError/Code/migrationRequired` when the change can't be inferred.
    public var migrationPlan: MigrationPlan?
    /// Brings a store written with an older model version up to ``model`` at ``create()`` with code, Realm's way:
    /// called once with the store's version (see `Migration`), inside the transaction that opens the store. The same
    /// block gives the same records here as on LMDB and PostgreSQL: what the schema difference can do alone is done
    /// around it. Give a block or a ``migrationPlan``, not both.
    public var migrationBlock: MigrationBlock?
    /// Called on the opening thread as a migration goes through each step's entities (see ``MigrationProgress``).
    public var migrationProgress: MigrationProgressHandler?
    /// Whether ``create()`` copies the store before a migration with a heavyweight step (one a mapping model
    /// describes). On by default. The copy, ``migrationBackupFile(fromVersion:)``, is a complete store of the old
    /// version, kept after a successful migration (delete it when no longer wanted) and removed after a failed one,
    /// which leaves the store itself unchanged.
    public var backsUpBeforeHeavyweightMigration = true

    /// Where the database logs, through swift-log; `nil` (the default) logs nothing. Operations and transactions
    /// are logged at `.trace`, migrations at `.info`; no stored value, key or passphrase is ever logged.
    public var logger: Logger?
    /// Where the database records metrics, through swift-metrics — pass `MetricsSystem.factory` for the
    /// bootstrapped backend; `nil` (the default) records none. Transaction counts and durations and migrations,
    /// each with the dimensions `backend` and `store`.
    public var metricsFactory: (any MetricsFactory)?
    /// Where the database's spans go, through swift-distributed-tracing — pass `InstrumentationSystem.tracer` for the
    /// bootstrapped tracer; `nil` (the default) makes none. A span per transaction (`persistence.read`,
    /// `persistence.write`) and one for opening the store (`persistence.open`, with a migration's versions when one
    /// ran), each a child of the caller's span; no stored value or key is ever in one.
    public var tracer: (any Tracer)?

    /// Creates a builder for a model.
    public init(databaseName: String, model: Model) {
        self.databaseName = databaseName
        self.model = model
    }

    /// Creates a builder for version 1 of a model made of these entity types.
    public init(databaseName: String, entities: [any Entity.Type]) {
        self.init(databaseName: databaseName, model: Model(version: 1, entities: entities))
    }

    /// Validates the configuration, then opens (creating when needed) the database.
    ///
    /// Nothing is created on disk until every check has passed.
    /// - Throws: ``PersistenceError`` — `PersistenceError/Code/invalidName`,
    ///   `PersistenceError/Code/invalidConfiguration`, `PersistenceError/Code/directoryNotFound`,
    ///   `PersistenceError/Code/permissionDenied`, `PersistenceError/Code/invalidSchema`,
    ///   `PersistenceError/Code/migrationRequired`, `PersistenceError/Code/corrupt`, …
    public func create() throws -> SQLiteDatabase {
        guard (1...64).contains(maximumReaders) else {
            throw PersistenceError(.invalidConfiguration, "maximumReaders must be between 1 and 64")
        }
        guard maximumVectorCacheBytes >= 0 else {
            throw PersistenceError(.invalidConfiguration, "maximumVectorCacheBytes can't be negative")
        }
        guard busyTimeout >= .zero else {
            throw PersistenceError(.invalidConfiguration, "busyTimeout can't be negative")
        }
        guard !(inMemory && directory != nil) else {
            throw PersistenceError(.invalidConfiguration, "an in-memory database can't also have a directory")
        }
        guard !model.entities.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the model has no entities")
        }
        let layouts = try model.layouts()
        let path: String
        if inMemory {
            try StoreLocation.validate(name: databaseName)
            path = ":memory:"
        } else {
            let file = try storeFile()
            StoreBackup.removeAbandonedCopies(of: file)
            path = file.path
        }
        let instrumentation = Instrumentation(
            logger: logger, metricsFactory: metricsFactory, tracer: tracer, backend: "sqlite",
            system: .init(name: "sqlite", isServer: false), store: databaseName)
        let migration = try migration()
        return try instrumentation.opening {
            let database = try SQLiteDatabase(
                path: path, inMemory: inMemory, model: model, layouts: layouts, maximumReaders: maximumReaders,
                maximumVectorCacheBytes: maximumVectorCacheBytes, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                synchronous: synchronous, migration: migration,
                instrumentation: instrumentation)
            return try database.buildingFullTextIndexes(schemaVersion: model.version, model: model)
        }
    }

    /// The store's file, once the name and directory are checked.
    private func storeFile() throws -> URL {
        try StoreLocation(name: databaseName, directory: directory).file(extension: "sqlite")
    }

    private var busyTimeoutMilliseconds: Int32 {
        Int32(
            clamping: busyTimeout.components.seconds * 1000
                + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The migration ``create()`` runs on a store of an older version, with the plan checked.
    private func migration() throws -> SQLiteMigration {
        let backupFile: ((Int) -> URL)?
        if backsUpBeforeHeavyweightMigration, !inMemory {
            let file = try storeFile()
            backupFile = { Self.backupFile(of: file, version: $0) }
        } else {
            backupFile = nil
        }
        guard migrationPlan == nil || migrationBlock == nil else {
            throw PersistenceError(
                .invalidConfiguration,
                "the builder has both a migrationPlan and a migrationBlock; a store's history is described one way: "
                    + "give the plan's steps mapping models, or the block every version's code")
        }
        return try SQLiteMigration(
            plan: migrationPlan, block: migrationBlock, model: model, progress: migrationProgress,
            backupFile: backupFile)
    }

    /// Where ``create()`` copies a store of model version `fromVersion` before a heavyweight migration (see
    /// ``backsUpBeforeHeavyweightMigration``): `<directory>/<databaseName>.v<fromVersion>.sqlite-backup`, itself a
    /// complete SQLite store of that version.
    /// - Throws: `PersistenceError/Code/invalidName` or `PersistenceError/Code/directoryNotFound`, as ``create()``.
    public func migrationBackupFile(fromVersion: Int) throws -> URL {
        Self.backupFile(of: try storeFile(), version: fromVersion)
    }

    private static func backupFile(of store: URL, version: Int) -> URL {
        store.deletingPathExtension().appendingPathExtension("v\(version).sqlite-backup")
    }

    /// Deletes this builder's store — `<directory>/<databaseName>.sqlite` with its `-wal`, `-shm`, `-journal` and
    /// migration backups — as ``SQLiteDatabase/deleteStore(named:in:)`` does: refused with `storeInUse` while a
    /// database of this process has it open. An in-memory builder has no files: `false`.
    /// - Returns: Whether there was anything to delete.
    @discardableResult
    public func deleteStore() throws -> Bool {
        guard !inMemory else { return false }
        return try SQLiteDatabase.deleteStore(named: databaseName, in: directory)
    }

    /// Whether the store's file exists (an in-memory builder has none).
    /// - Throws: `PersistenceError/Code/invalidName` or `PersistenceError/Code/directoryNotFound`, as ``create()``.
    public func storeExists() throws -> Bool {
        guard !inMemory else { return false }
        return FileManager.default.fileExists(atPath: try storeFile().path)
    }

    /// The model versions of the migration ``create()`` would run — the stored version, and the model's — read from
    /// the store's metadata without running it; `nil` when there is no store or it is at the model's version.
    /// - Throws: What ``create()`` would throw before migrating: `PersistenceError/Code/migrationRequired` for a
    ///   changed schema at the same version, `PersistenceError/Code/invalidConfiguration` for a store of a newer
    ///   version, `PersistenceError/Code/corrupt`, `PersistenceError/Code/unsupportedFormatVersion`.
    public func pendingMigration() throws -> ClosedRange<Int>? {
        guard try storeExists() else { return nil }
        let connection = try Connection(
            path: try storeFile().path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { connection.close() }
        guard let metadata = try SchemaStore.readMetadata(connection) else { return nil }
        let current = try model.layouts().map(\.entity)
        let decision = try StoreGate.decide(
            metadata, formats: 1...SchemaStore.formatVersion, model: model, current: current)
        guard case .migrate(let version, _) = decision else { return nil }
        return version...model.version
    }

    /// Copies the store with SQLite's online backup API — one consistent snapshot of its committed content, the
    /// `-wal`'s included — to `<destination>/<databaseName>.sqlite`, a store of the same version this builder opens
    /// with ``directory`` set to `destination`. The store is only read: other connections may go on writing.
    /// - Throws: `PersistenceError/Code/notFound` when there is no store (or the builder is in memory);
    ///   `PersistenceError/Code/invalidArgument` when the destination holds a store of that name;
    ///   `PersistenceError/Code/storageFull` or `PersistenceError/Code/ioFailure` with nothing left of the copy.
    public func copyStore(into destination: URL) throws {
        let file = try storeFile()
        guard !inMemory, FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.notFound, "no SQLite store at \(file.path)")
        }
        let target = try StoreLocation(name: databaseName, directory: destination).file(extension: "sqlite")
        guard !FileManager.default.fileExists(atPath: target.path) else {
            throw PersistenceError(.invalidArgument, "\(target.path) exists: a copy never replaces a store")
        }
        let connection = try Connection(
            path: file.path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        defer { connection.close() }
        try StoreBackup.copy(from: connection, to: target)
    }

    /// Runs the migration ``create()`` would run on the store — every step, mapping code included, with its side
    /// effects — and rolls it back: the store is left as it was, and no backup is made. Use it before shipping a
    /// new model version, on a copy of real data, to learn whether each step succeeds, whether it is inferred or
    /// mapped, and the records of each entity.
    ///
    /// - Returns: What the migration would do, step by step; `nil` when there is no store, or it needs no
    ///   migration.
    /// - Throws: What ``create()`` would throw, except that nothing is created or changed.
    public func dryRunMigration() throws -> MigrationReport? {
        guard !inMemory else { return nil }
        _ = try model.layouts()
        let file = try storeFile()
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let connection = try Connection(
            path: file.path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let mappings = try model.layouts().enumerated().map { TableMapping(index: $0.offset, layout: $0.element) }
        return try SchemaStore.prepare(
            connection, model: model, mappings: mappings, migration: migration(), dryRun: true)
    }
}
