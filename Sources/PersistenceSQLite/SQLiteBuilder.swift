public import Foundation
// Apps import one module: the backend brings the core's protocols and types with it.
@_exported public import PersistenceCore

/// Builds a ``SQLiteDatabase``: validates the configuration, then opens or creates the store.
///
/// ```swift
/// let db = try SQLiteBuilder(databaseName: "App", model: Model(version: 1, entities: [User.self])).create()
/// ```
///
/// The store is one SQLite file, `<directory>/<databaseName>.sqlite` (with `-wal` and `-shm` beside it while
/// open), in WAL mode: one serialized writer and a pool of readers, so a long write never blocks reads.
public struct SQLiteBuilder: DatabaseBuilder {
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
            path = try StoreLocation(name: databaseName, directory: directory).file(extension: "sqlite").path
        }
        let milliseconds = Int32(
            clamping: busyTimeout.components.seconds * 1000
                + busyTimeout.components.attoseconds / 1_000_000_000_000_000)
        return try SQLiteDatabase(
            path: path, inMemory: inMemory, model: model, layouts: layouts, maximumReaders: maximumReaders,
            busyTimeoutMilliseconds: milliseconds, synchronous: synchronous)
    }
}
