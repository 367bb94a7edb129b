public import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// A database in one SQLite file (or in memory), made by ``SQLiteBuilder``.
///
/// Writes are serialized on one connection; reads run concurrently on a pool of read-only connections and see
/// the last committed state, even while a write is open (WAL mode). Prepared statements are cached per
/// connection and values are always bound.
public final class SQLiteDatabase: FileBackedDatabase, MigratingDatabase, Sendable {
    public typealias Context = SQLiteContext

    /// The store's file, or `nil` in memory.
    public let fileURL: URL?

    public var storeFileURL: URL? { fileURL }
    /// What the migration that ran when the store opened did, step by step; `nil` when none ran.
    public let migrationReport: MigrationReport?
    let mappings: EntityLookup<TableMapping>
    /// The writer connection, and its `PRAGMA data_version` when last checked.
    let writer: WriterSlot<Connection, Value?>
    /// Whether other connections (other processes, other databases on the file) can commit to the file.
    let watchesOtherConnections: Bool
    let readers: ConnectionPool<Connection>?
    let runner: TransactionRunner
    let instrumentation: Instrumentation
    /// The stored vectors nearest queries copied, shared by every connection (``VectorCache``); `nil` when the
    /// builder allows none.
    let vectorCache: VectorCache?
    private let driver: TransactionDriver
    /// Where commits are published to observers.
    @_spi(PersistenceBackend) public let observationHub = ObservationHub()
    /// This database's hold on its store file (`nil` in memory), ended by `close()`.
    private let registration: StoreFiles.StoreRegistration?

    init(
        path: String, inMemory: Bool, model: Model, layouts: [RecordLayout], maximumReaders: Int,
        maximumVectorCacheBytes: Int, busyTimeoutMilliseconds: Int32, synchronous: SQLiteBuilder.Synchronous,
        migration: SQLiteMigration, instrumentation: Instrumentation
    ) throws {
        self.instrumentation = instrumentation
        vectorCache =
            maximumVectorCacheBytes > 0 && layouts.contains { !$0.vectors.isEmpty }
            ? VectorCache(limit: maximumVectorCacheBytes) : nil
        // Held from before the file is touched, so the store can't be deleted while it opens.
        registration = inMemory ? nil : StoreFiles.register(URL(fileURLWithPath: path))
        let connection = try Connection(path: path, readOnly: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        if !inMemory {
            guard case .text(let mode)? = try connection.scalar("PRAGMA journal_mode = WAL"), mode.lowercased() == "wal"
            else {
                throw PersistenceError(.cannotOpen, "the database could not switch to WAL journal mode")
            }
        }
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        let tableMappings = layouts.enumerated().map { TableMapping(index: $0.offset, layout: $0.element) }
        migrationReport = try SchemaStore.prepare(
            connection, model: model, mappings: tableMappings, migration: migration)
        if let migrationReport {
            instrumentation.migrated(
                from: migrationReport.fromVersion, to: migrationReport.toVersion, steps: migrationReport.steps.count,
                summary: migrationReport.description)
        }

        fileURL = inMemory ? nil : URL(fileURLWithPath: path)
        mappings = try EntityLookup(model: model, storage: tableMappings)
        writer = WriterSlot(connection, state: nil)
        watchesOtherConnections = !inMemory
        readers =
            inMemory
            ? nil
            : ConnectionPool(size: maximumReaders) {
                let reader = try Connection(
                    path: path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                try reader.execute("PRAGMA query_only = 1")
                return reader
            }
        runner = TransactionRunner(label: "persistence.sqlite")
        driver = TransactionDriver(instrumentation: instrumentation, observationHub: observationHub, model: model)
        _ = try writer.withConnection { try noticeExternalCommits($0) }
    }

    deinit {
        // Readers first: the writer, closing last, checkpoints the WAL and removes the -wal and -shm files.
        readers?.closeIdle()
    }

    /// Closes the database: waits for the write and the reads under way, closes every connection (the last one
    /// checkpoints the WAL and removes the `-wal` and `-shm` files), and releases the store file. Later calls throw
    /// `PersistenceError/Code/closed`; closing again does nothing.
    /// - Throws: `PersistenceError/Code/nestedTransaction` when called inside one of this database's transactions.
    public func close() throws {
        guard readers?.depth.value ?? 0 == 0, !writer.isHeldByCurrentThread else {
            throw PersistenceError(.nestedTransaction, "a database can't be closed inside its own transaction")
        }
        // Readers first, outside the writer lock: a read under way may start a write before it ends. The writer,
        // closing last, checkpoints the WAL and removes the -wal and -shm files.
        readers?.close()
        try writer.close()
        vectorCache?.removeAll()
        registration?.end()
    }

    /// Deletes the files of the SQLite store named `name` in `directory`: `<name>.sqlite`, its `-wal`, `-shm` and
    /// `-journal` files and its migration backups (`<name>.v<version>.sqlite-backup`). Refused with
    /// `PersistenceError/Code/storeInUse` while a database of this process has it open.
    /// - Returns: Whether there was anything to delete.
    @discardableResult
    public static func deleteStore(named name: String, in directory: URL? = nil) throws -> Bool {
        try StoreFiles.delete(
            named: name, in: directory, fileExtension: "sqlite", companions: ["-wal", "-shm", "-journal", ".sync-lock"]
        ) { file in
            // A killed backup's temporary copy is the user's data too.
            if StoreBackup.isTemporaryCopy(file, ofStore: name) { return true }
            // <name>.v<digits>.sqlite-backup
            guard file.hasPrefix(name + ".v"), file.hasSuffix(".sqlite-backup") else { return false }
            let version = file.dropFirst(name.count + 2).dropLast(".sqlite-backup".count)
            return !version.isEmpty && version.allSatisfy(\.isASCII) && version.allSatisfy(\.isNumber)
        }
    }

    /// The names of the SQLite stores (`<name>.sqlite` files) in `directory`, sorted.
    public static func storeNames(in directory: URL? = nil) throws -> [String] {
        try StoreFiles.names(in: directory, fileExtension: "sqlite")
    }

    /// Runs `body` in a read transaction: a consistent snapshot of committed data.
    ///
    /// Mutations through the context throw `PersistenceError/Code/readOnly`.
    @discardableResult
    public func read<R>(_ body: (SQLiteContext) throws -> R) throws -> R {
        guard let readers else {
            // In memory there is one connection: reads take the writer's turn.
            return try writer.withConnection { try transaction(on: $0, writable: false, body) }
        }
        return try readers.withConnection { try transaction(on: $0, writable: false, body) }
    }

    /// Runs `body` in a write transaction: committed when it returns, rolled back entirely when it throws.
    @discardableResult
    public func write<R>(_ body: (SQLiteContext) throws -> R) throws -> R {
        try write(options: [], body)
    }

    /// Runs `body` in a write transaction that treats its changes as `options` say: committed when it returns,
    /// rolled back entirely when it throws.
    @discardableResult
    public func write<R>(options: WriteOptions, _ body: (SQLiteContext) throws -> R) throws -> R {
        try writer.withConnection { connection in
            try noticeExternalCommits(connection)
            return try transaction(on: connection, writable: true, options: options, body)
        }
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (SQLiteContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (SQLiteContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }

    @discardableResult
    public func write<R: Sendable>(
        options: WriteOptions, _ body: @escaping @Sendable (SQLiteContext) throws -> R
    ) async throws -> R {
        try await runner.write { try self.write(options: options, body) }
    }

    /// Runs `body` in a transaction on `connection`, through the core's ``TransactionDriver``.
    private func transaction<R>(
        on connection: Connection, writable: Bool, options: WriteOptions = [], _ body: (SQLiteContext) throws -> R
    ) throws -> R {
        try driver.run(
            writable: writable, options: options,
            begin: { try connection.execute(writable ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED") },
            commit: {
                guard !connection.isAutocommit else {
                    throw PersistenceError(
                        .backend, "SQLite rolled the transaction back after an earlier error; nothing was committed")
                }
                try connection.execute("COMMIT")
            },
            // SQLite may already have rolled back (after SQLITE_FULL, say); a failing ROLLBACK then changes nothing.
            rollback: { if !connection.isAutocommit { try? connection.execute("ROLLBACK") } },
            context: { recorder in
                SQLiteContext(
                    storage: SQLiteStorage(
                        connection: connection, mappings: mappings, instrumentation: instrumentation,
                        vectorCache: vectorCache, readsOnly: !writable),
                    graph: mappings.graph, recorder: recorder, instrumentation: instrumentation)
            }, body)
    }
}
