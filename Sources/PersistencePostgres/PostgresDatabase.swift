import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PostgresNIO

/// A database in a schema of a PostgreSQL server, made by ``PostgresBuilder``.
///
/// Transactions run concurrently, each on a connection of its own: reads on a pool of connections, each in a
/// `REPEATABLE READ READ ONLY` snapshot; writes on another pool, each in one `SERIALIZABLE` transaction. As many
/// of each run at once as ``PostgresBuilder/poolSize`` says — a server's concurrent requests get concurrent
/// transactions. Writes from other processes and other servers run concurrently with them too, and PostgreSQL
/// guarantees that the committed writes have the effect of running one at a time, as they do on the embedded
/// backends. When it can't (two writers read and changed the same records), one write is rolled back whole and throws
/// ``PersistenceError/Code/conflict``; ``Database/write(retryingUpTo:_:)-7n6ls`` runs such a write again, never `write(_:)`
/// itself.
///
/// Observers hear of this database's commits as they commit (in commit order), and of other servers' commits within
/// milliseconds through PostgreSQL's `LISTEN`/`NOTIFY`, without polling: each table of the store notifies the store's
/// channel when a transaction that changed it commits, and a database listens on one connection of its own from its
/// first observation on (a server that never observes doesn't listen).
///
/// The synchronous API blocks the calling thread on the server's answers: call it from any thread but one of
/// SwiftNIO's event loops (it would wait on itself). The `async` API runs each transaction on one of the database's
/// own threads (as many as its connections), never blocking the cooperative pool or an event loop: a transaction's
/// block is synchronous by design — the house rule "never `await` while a transaction is open" holds on every backend
/// — so it needs a thread while it talks to the server.
public final class PostgresDatabase: MigratingDatabase, Sendable {
    public typealias Context = PostgresContext

    /// The PostgreSQL schema that holds the store's tables.
    public let schema: String
    /// What the migration that ran when the store opened did, step by step; `nil` when none ran (none was needed,
    /// or another server migrated the store first).
    public let migrationReport: MigrationReport?
    let tables: EntityLookup<PostgresTable>
    /// The connections write transactions run on, one write each at a time.
    let writers: ConnectionPool<ServerConnection>
    /// The connections read transactions run on.
    let readers: ConnectionPool<ServerConnection>
    let runner: TransactionRunner
    let instrumentation: Instrumentation
    private let driver: TransactionDriver
    /// Hears other servers' commits, once the first observation is made.
    let listener: CommitListener
    /// Where commits are published to observers.
    @_spi(PersistenceBackend) public let observationHub = ObservationHub()
    /// This database's hold on its store, ended by `close()`.
    private let registration: StoreFiles.StoreRegistration

    init(
        builder: PostgresBuilder, writer connection: ServerConnection, origin: String,
        tables: EntityLookup<PostgresTable>, registration: StoreFiles.StoreRegistration,
        instrumentation: Instrumentation, migrationReport: MigrationReport?
    ) {
        schema = builder.schema
        self.migrationReport = migrationReport
        self.tables = tables
        self.registration = registration
        self.instrumentation = instrumentation
        writers = ConnectionPool(size: builder.poolSize, idle: [connection]) {
            try ServerConnection.open(builder, origin: origin)
        }
        readers = ConnectionPool(size: builder.poolSize) { try ServerConnection.open(builder, origin: origin) }
        runner = TransactionRunner(label: "persistence.postgres", threads: 2 * builder.poolSize)
        driver = TransactionDriver(
            instrumentation: instrumentation, observationHub: observationHub, ordersCommits: true, model: tables.model)
        let listener = CommitListener(
            builder: builder, origin: origin, entities: Set(tables.all.map(\.layout.entity.name)), hub: observationHub)
        self.listener = listener
        observationHub.whenSubscribed { listener.start() }
    }

    deinit {
        listener.close()
        readers.close()
        writers.close()
        runner.stop()
    }

    /// Closes the database: waits for the writes and reads under way, closes every connection, and releases the
    /// store. Later calls throw `PersistenceError/Code/closed`; closing again does nothing.
    /// - Throws: `PersistenceError/Code/nestedTransaction` when called inside one of this database's transactions.
    public func close() throws {
        guard readers.depth.value == 0, writers.depth.value == 0 else {
            throw PersistenceError(.nestedTransaction, "a database can't be closed inside its own transaction")
        }
        listener.close()
        readers.close()
        writers.close()
        runner.stop()
        registration.end()
    }

    /// Runs `body` in a read transaction: a `REPEATABLE READ` snapshot of committed data.
    ///
    /// Mutations through the context throw `PersistenceError/Code/readOnly`.
    @discardableResult
    public func read<R>(_ body: (PostgresContext) throws -> R) throws -> R {
        try readers.withConnection { try transaction(on: $0, writable: false, body) }
    }

    /// Runs `body` in a write transaction: committed when it returns, rolled back entirely when it throws.
    ///
    /// `body` runs once. When the server rolls the write back — a ``PersistenceError/Code/conflict`` with a
    /// concurrent writer, a ``PersistenceError/Code/connectionLost`` — the error is thrown and nothing of the write
    /// was committed; use ``Database/write(retryingUpTo:_:)-7n6ls`` to run it again. Writes run concurrently, each on a
    /// connection of its own (see ``PostgresBuilder/poolSize``); a write started inside another on the same thread
    /// throws ``PersistenceError/Code/nestedTransaction`` (it would wait for locks the outer one holds).
    @discardableResult
    public func write<R>(_ body: (PostgresContext) throws -> R) throws -> R {
        try write(options: [], body)
    }

    @discardableResult
    public func write<R>(options: WriteOptions, _ body: (PostgresContext) throws -> R) throws -> R {
        try withWriteConnection { try transaction(on: $0, writable: true, options: options, body) }
    }

    /// Runs `body` with a connection of the write pool; refuses a write inside a write on the same thread.
    private func withWriteConnection<R>(_ body: (ServerConnection) throws -> R) throws -> R {
        guard writers.depth.value == 0 else {
            throw PersistenceError(
                .nestedTransaction, "a transaction was started inside a write transaction on the same thread")
        }
        return try writers.withConnection(body)
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (PostgresContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (PostgresContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }

    @discardableResult
    public func write<R: Sendable>(
        options: WriteOptions, _ body: @escaping @Sendable (PostgresContext) throws -> R
    ) async throws -> R {
        try await runner.write { try self.write(options: options, body) }
    }

    /// An advisory lock key for `name`: a stable 64-bit hash of it (FNV-1a), the same in every process.
    package static func advisoryLockKey(_ name: String) -> Int64 { advisoryLockKey(bytes: name.utf8) }

    /// An advisory lock key for `bytes`: FNV-1a, the same in every process.
    package static func advisoryLockKey(bytes: some Sequence<UInt8>) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    /// Runs `body` in a write transaction (off the cooperative pool) while its connection holds the session-level
    /// advisory lock `key`: taken before the transaction begins, so its snapshot sees every write of the lock's
    /// previous holder, and released once it ended. Writes under one key take turns instead of failing each other's
    /// serialization checks (with the pages of a small table's index they all read and write, nearly all would).
    package func write<R: Sendable>(
        takingTurnsOn key: Int64, _ body: @escaping @Sendable (PostgresContext) throws -> R
    ) async throws -> R {
        try await runner.write {
            try self.withWriteConnection { connection in
                _ = try connection.run("SELECT pg_catalog.pg_advisory_lock($1)", [.integer(key)])
                defer {
                    // A lock that can't be released must not outlive the write: the connection goes, and the lock
                    // with it.
                    if (try? connection.run("SELECT pg_catalog.pg_advisory_unlock($1)", [.integer(key)])) == nil {
                        connection.close()
                    }
                }
                return try self.transaction(on: connection, writable: true, body)
            }
        }
    }

    /// Runs `body` in a `READ COMMITTED` write transaction (off the cooperative pool): each statement sees what
    /// committed before it, and nothing keeps another transaction from changing what `body` read — `body` locks what
    /// it decides from (`SELECT … FOR UPDATE`, advisory locks) and refuses or retries what changed meanwhile; its
    /// foreign-key checks keep each record they find (`PostgresStorage.lockReferenced(keys:entity:)`). For a write
    /// that many clients run at once on different records (a sync server's pushes), which `SERIALIZABLE` transactions
    /// would nearly all fail for sharing index pages. Not for deletions with delete rules: the referrers they find
    /// could miss one another writer adds meanwhile.
    package func writeLockingRows<R: Sendable>(
        _ body: @escaping @Sendable (PostgresContext) throws -> R
    ) async throws -> R {
        try await runner.write {
            try self.withWriteConnection { connection in
                try self.transaction(on: connection, writable: true, readCommitted: true, body)
            }
        }
    }

    /// Runs `body` in a transaction on `connection`, through the core's ``TransactionDriver``; a write
    /// `SERIALIZABLE`, or `READ COMMITTED` when the caller locks what it reads (`readCommitted`; its foreign-key checks
    /// then lock what they find).
    private func transaction<R>(
        on connection: ServerConnection, writable: Bool, options: WriteOptions = [],
        readCommitted: Bool = false, _ body: (PostgresContext) throws -> R
    ) throws -> R {
        let isolation = readCommitted ? "READ COMMITTED" : "SERIALIZABLE"
        return try driver.run(
            writable: writable, options: options,
            begin: {
                // Not waited for: the transaction's first statement follows it, and its wait reports a failed BEGIN.
                connection.send(
                    writable
                        ? "BEGIN ISOLATION LEVEL \(isolation)" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            },
            commit: {
                // A transaction that ran no statement: a failed BEGIN is its own error, not an unknown commit outcome.
                try connection.settle()
                do {
                    let outcome = try connection.run("COMMIT")
                    guard outcome.metadata.command == "COMMIT" else {
                        throw PersistenceError(
                            .backend, "the server rolled the transaction back instead of committing it")
                    }
                } catch let error as PersistenceError where error.code == .connectionLost && writable {
                    throw PersistenceError(
                        .commitOutcomeUnknown,
                        "the connection dropped while the server was committing: the write may or may not have been "
                            + "committed",
                        underlyingError: error)
                }
            },
            rollback: { try? connection.execute("ROLLBACK") },
            context: { recorder in
                PostgresContext(
                    storage: PostgresStorage(
                        connection: connection, tables: tables, schema: schema, instrumentation: instrumentation,
                        locksReferences: writable && readCommitted),
                    graph: tables.graph, recorder: recorder, instrumentation: instrumentation)
            }, body)
    }

    /// Waits until every commit other servers finished before this call has been heard (they are published as they
    /// arrive, through `LISTEN`/`NOTIFY`, without this call), and says whether any was heard since the last call.
    /// Observers need no call of this: it is for code that must know it has seen everything up to now.
    /// - Throws: `closed` once the database is closed; `unreachable` and the other connection errors while the
    ///   listening connection is down and can't be opened again.
    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try listener.catchUp()
    }
}
