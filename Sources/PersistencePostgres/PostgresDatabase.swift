import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
import PostgresNIO

/// A database in a schema of a PostgreSQL server, made by ``PostgresBuilder``.
///
/// Reads run concurrently on a pool of connections, each in a `REPEATABLE READ READ ONLY` snapshot. This
/// database's writes are serialized on one connection, each in one `SERIALIZABLE` transaction; writes from other
/// processes and other servers run concurrently with them, and PostgreSQL guarantees that the committed writes have
/// the effect of running one at a time — as they do on the embedded backends. When it can't (two writers read and
/// changed the same records), one write is rolled back whole and throws ``PersistenceError/Code/conflict``;
/// ``Database/write(retryingUpTo:_:)-7n6ls`` runs such a write again, never `write(_:)` itself.
///
/// The synchronous API blocks the calling thread on the server's answers: call it from any thread but one of
/// SwiftNIO's event loops (it would wait on itself); the `async` API runs on the database's own queues, never
/// blocking the cooperative pool.
public final class PostgresDatabase: MigratingDatabase, Sendable {
    public typealias Context = PostgresContext

    /// The PostgreSQL schema that holds the store's tables.
    public let schema: String
    /// What the migration that ran when the store opened did, step by step; `nil` when none ran (none was needed,
    /// or another server migrated the store first).
    public let migrationReport: MigrationReport?
    let tables: EntityLookup<PostgresTable>
    /// The writer connection, and the commit sequence's value it last drew or saw.
    let writer: WriterSlot<ServerConnection, Int64?>
    let readers: ReaderPool<ServerConnection>
    let runner: TransactionRunner
    let instrumentation: Instrumentation
    private let driver: TransactionDriver
    /// Where commits are published to observers.
    @_spi(PersistenceBackend) public let observationHub = ObservationHub()
    /// This database's hold on its store, ended by `close()`.
    private let registration: StoreFiles.StoreRegistration

    init(
        builder: PostgresBuilder, writer connection: ServerConnection, tables: EntityLookup<PostgresTable>,
        registration: StoreFiles.StoreRegistration, instrumentation: Instrumentation, migrationReport: MigrationReport?
    ) {
        schema = builder.schema
        self.migrationReport = migrationReport
        self.tables = tables
        self.registration = registration
        self.instrumentation = instrumentation
        writer = WriterSlot(connection, state: nil) { try ServerConnection.open(builder) }
        readers = ReaderPool(size: builder.poolSize - 1) { try ServerConnection.open(builder) }
        runner = TransactionRunner(label: "persistence.postgres")
        driver = TransactionDriver(instrumentation: instrumentation, observationHub: observationHub)
        // Where the commit sequence stands now: commits after this are news.
        _ = try? checkForExternalChanges()
    }

    deinit {
        readers.close()
        try? writer.close()
    }

    /// Closes the database: waits for the write and the reads under way, closes every connection, and releases the
    /// store. Later calls throw `PersistenceError/Code/closed`; closing again does nothing.
    /// - Throws: `PersistenceError/Code/nestedTransaction` when called inside one of this database's transactions.
    public func close() throws {
        guard readers.readDepth.value == 0, !writer.isHeldByCurrentThread else {
            throw PersistenceError(.nestedTransaction, "a database can't be closed inside its own transaction")
        }
        readers.close()
        try writer.close()
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
    /// was committed; use ``Database/write(retryingUpTo:_:)-7n6ls`` to run it again.
    @discardableResult
    public func write<R>(_ body: (PostgresContext) throws -> R) throws -> R {
        try writer.withConnection { try transaction(on: $0, writable: true, body) }
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (PostgresContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (PostgresContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }

    /// Runs `body` in a transaction on `connection`, through the core's ``TransactionDriver``.
    private func transaction<R>(
        on connection: ServerConnection, writable: Bool, _ body: (PostgresContext) throws -> R
    ) throws -> R {
        try driver.run(
            writable: writable,
            begin: {
                try connection.execute(
                    writable
                        ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            },
            commit: {
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
                    connection: connection, tables: tables, schema: schema, recorder: recorder,
                    instrumentation: instrumentation)
            },
            published: { recorder in
                if !recorder.isEmpty, self.drawCommitNumber(connection) { self.observationHub.publish(.external) }
            }, body)
    }

    /// Draws a number from the store's commit sequence after a commit that changed something — after, so that a
    /// number drawn always means a commit others can see — and returns whether other databases drew numbers since
    /// this one last looked: they committed meanwhile. The write is committed already: a failure here is ignored
    /// (the next look notices what it missed).
    private func drawCommitNumber(_ connection: ServerConnection) -> Bool {
        let sequence = PostgresSchemaStore.qualified(schema, PostgresSchemaStore.commitSequence)
        guard let row = try? connection.rows("SELECT nextval($1::regclass)", [.text(sequence)]).first,
            case .integer(let number) = row[0]
        else { return false }
        defer { writer.state = number }
        guard let seen = writer.state else { return false }
        return number != seen + 1
    }

    /// Notices writes that other connections — other processes, other app servers — committed since this database
    /// last looked, and tells every observer to read again when there were some. This database's own writes notice
    /// them as they commit.
    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try writer.withConnection { connection in
            let sequence = PostgresSchemaStore.qualified(schema, PostgresSchemaStore.commitSequence)
            guard let values = try connection.rows("SELECT last_value, is_called FROM \(sequence)").first,
                case .integer(let value) = values[0]
            else { return false }
            // A sequence nothing was drawn from yet says 1, not called.
            let last = values[1] == .integer(1) ? value : 0
            defer { writer.state = last }
            guard let seen = writer.state, last != seen else { return false }
            observationHub.publish(.external)
            return true
        }
    }
}
