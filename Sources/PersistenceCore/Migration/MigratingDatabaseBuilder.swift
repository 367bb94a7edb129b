public import Foundation

/// A database that may have migrated its store when it opened, and says how.
public protocol MigratingDatabase: Database {
    /// What the migration run by the builder's `create()` did: `nil` when the store needed none (or was new).
    var migrationReport: MigrationReport? { get }
}

/// A builder whose `create()` migrates an older store to its model: what a tool needs to rehearse, run and report
/// the migration an app ships, on any backend (see the `PersistenceCommands` product).
public protocol MigratingDatabaseBuilder: DatabaseBuilder where Database: MigratingDatabase {
    /// The model the store is opened with (and migrated to).
    var model: Model { get }

    /// The model versions the app shipped and the mapping models between them: how `create()` brings a store of an
    /// older version up to ``model``, step by step — the same plan on every backend (see ``MigrationPlan``).
    var migrationPlan: MigrationPlan? { get set }

    /// The app's migration code, Realm's way: called once by `create()` with the version of an older store — the
    /// same block on every backend (see ``Migration``). A builder takes a plan or a block, not both
    /// (`invalidConfiguration`).
    var migrationBlock: MigrationBlock? { get set }

    /// Called while ``DatabaseBuilder/create()`` migrates, between records (see ``MigrationProgress``).
    var migrationProgress: MigrationProgressHandler? { get set }

    /// Runs the migration `create()` would run — every step and the app's migration code included — and rolls it
    /// back, leaving the store as it was.
    /// - Returns: What the migration would do; `nil` when there is no store or it needs no migration.
    func dryRunMigration() throws -> MigrationReport?

    /// The schema versions of the migration `create()` would run — the stored version, and the model's — read
    /// from the store's metadata without running it or writing anything; `nil` when there is no store or it is
    /// current. A tool that must not migrate (a check, an export) asks this first.
    /// - Throws: What `create()` would throw before migrating: ``PersistenceError/Code/migrationRequired`` for a
    ///   changed schema at the same version, ``PersistenceError/Code/invalidConfiguration`` for a store of a newer
    ///   version, ``PersistenceError/Code/corrupt`` for damaged metadata.
    func pendingMigration() throws -> ClosedRange<Int>?

    /// Whether the store this builder names exists, without creating or changing anything (`create()` would make
    /// a new, empty store where this is `false`).
    /// - Throws: ``PersistenceError`` for a configuration `create()` would refuse (an invalid name, a server that
    ///   can't be reached).
    func storeExists() throws -> Bool
}

/// A builder of a store held in files of a directory (SQLite, LMDB), which can copy its store.
public protocol FileBackedDatabaseBuilder: MigratingDatabaseBuilder {
    /// The database name: the files' stem.
    var databaseName: String { get set }
    /// The directory of the store's files; `nil` for the backend's default directory.
    var directory: URL? { get set }

    /// Copies the store's committed content, as it is at one moment, into `destination` under the same name — a
    /// complete store of the same version that this builder opens once its ``directory`` is `destination`. The
    /// store is only read: an app may go on using it meanwhile.
    /// - Throws: ``PersistenceError`` — `notFound` when there is no store; `invalidArgument` when `destination`
    ///   already holds a store of that name; `storageFull` or `ioFailure` when the copy can't be written (nothing
    ///   is left of it then).
    func copyStore(into destination: URL) throws
}
