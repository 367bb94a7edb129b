public import Foundation

/// A store of entities, generic over its backend: write data code once against this protocol and swap backends
/// by changing only the builder.
///
/// Work happens in transaction blocks. A `write(_:)` is one atomic transaction, rolled back entirely when its
/// closure throws; a `read(_:)` sees a consistent snapshot of committed data, even while a write is open.
///
/// ```swift
/// func signUp(_ db: some Database) throws {
///     try db.write { context in
///         try context.create(User(id: 1, name: "John", email: nil))
///         try context.create(Profile(id: 1, bio: ""))
///     }                                   // both or neither
///     let johns: [User] = try db.recover(key: "name", value: "John")
/// }
/// ```
///
/// The synchronous blocks run on the calling thread; from async code, use the `async` overloads, which run the
/// block off the cooperative pool. Do not start a transaction inside another on the same database and thread:
/// that throws ``PersistenceError/Code/nestedTransaction``.
public protocol Database<Context>: Sendable {
    /// The backend's transaction context, with the typed operations of ``DatabaseContext`` and the backend's own.
    associatedtype Context: DatabaseContext

    /// Runs `body` in a read transaction and returns its result.
    @discardableResult
    func read<R>(_ body: (Context) throws -> R) throws -> R

    /// Runs `body` in a write transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    func write<R>(_ body: (Context) throws -> R) throws -> R

    /// Runs `body` in a write transaction that treats its changes as `options` say (``WriteOptions``): committed
    /// when it returns, rolled back when it throws.
    @discardableResult
    func write<R>(options: WriteOptions, _ body: (Context) throws -> R) throws -> R

    /// Runs `body` in a read transaction off the cooperative pool.
    @discardableResult
    func read<R: Sendable>(_ body: @escaping @Sendable (Context) throws -> R) async throws -> R

    /// Runs `body` in a write transaction off the cooperative pool: committed when it returns, rolled back when it
    /// throws.
    @discardableResult
    func write<R: Sendable>(_ body: @escaping @Sendable (Context) throws -> R) async throws -> R

    /// Runs `body` in a write transaction that treats its changes as `options` say (``WriteOptions``), off the
    /// cooperative pool: committed when it returns, rolled back when it throws.
    @discardableResult
    func write<R: Sendable>(options: WriteOptions, _ body: @escaping @Sendable (Context) throws -> R) async throws -> R

    /// Checks that the whole store is sound and reports every problem it finds, without changing anything.
    ///
    /// It reads the entire store in one read transaction — every record, every index entry, every foreign key
    /// (``VerificationProblem/Kind/danglingReference``), the stored schema and metadata, and whatever consistency
    /// check the storage engine has — so it takes time proportional to the
    /// store's size, and its memory does not grow with the number of records. Writes may go on meanwhile; the
    /// check sees the snapshot its transaction started with. It does not repair anything: restore from a backup,
    /// or export what reads correctly. A report names entities, attributes, indexes and primary keys, never
    /// stored values.
    ///
    /// ```swift
    /// let report = try db.verify()
    /// if !report.isSound { print(report) }
    /// ```
    ///
    /// - Returns: The problems found and how much was checked; damage is reported, not thrown.
    /// - Throws: ``PersistenceError`` when the check itself can't run (the store can't be read at all, a
    ///   transaction can't begin) — some engines report badly damaged files as ``PersistenceError/Code/corrupt``
    ///   here rather than in the report.
    func verify() throws -> VerificationReport

    /// Checks that the whole store is sound, as the synchronous `verify()` does, running off the cooperative pool.
    func verify() async throws -> VerificationReport

    /// Where this database's commits are published to its observers (see ``observe(_:where:sortedBy:limit:offset:)``
    /// and ``changes(of:)``). A backend publishes each committed write's ``ChangeRecorder`` here while it still
    /// holds its writer lock. A backend's hook, not users' API: visible through
    /// `@_spi(PersistenceBackend) import PersistenceCore`.
    @_spi(PersistenceBackend) var observationHub: ObservationHub { get }

    /// Notices writes that other processes (or another database value opened on the same SQLite file) committed
    /// since this database last looked, and tells every observer to read again when there were some.
    ///
    /// Observers hear of this database's own commits at once. Commits made elsewhere are noticed when this
    /// database's next write transaction begins, or when this is called — poll it (from a timer, say) in a process
    /// that only reads. Their change sets are reported as incomplete: another process's changes can't be named
    /// record by record.
    ///
    /// - Returns: Whether there were such writes.
    @discardableResult
    func checkForExternalChanges() throws -> Bool

    /// Closes the database: waits for the transactions under way to end, then releases its files. Every later call
    /// throws ``PersistenceError/Code/closed``; closing again does nothing.
    ///
    /// Releasing the last reference closes a database too; `close()` makes it happen at a known point — before
    /// ``FileBackedDatabase/deleteStore(named:in:)`` at sign-out, say. Call it outside the database's own transaction
    /// blocks (from inside one it throws ``PersistenceError/Code/nestedTransaction`` rather than wait for itself).
    func close() throws
}

/// A database whose store is files in a directory (SQLite, LMDB): its stores can be listed and deleted by name.
///
/// A server's backend (PostgreSQL) doesn't adopt it — its stores live on the server, deleted through its builder —
/// so `deleteStore(named:in:)` is not something it could only refuse at run time.
public protocol FileBackedDatabase: Database {
    /// Deletes the files of the store named `name` in `directory` (the builder's default directory when `nil`):
    /// the store file and its companions (SQLite's `-wal`, `-shm` and migration backups; LMDB's `-lock`; a sync
    /// client's `.sync-lock`).
    ///
    /// Deleting a store's files while it is open corrupts it, so this refuses while any database of this process
    /// has the store open. Other processes can't be seen: stop them first.
    ///
    /// ```swift
    /// try userDatabase.close()
    /// try SQLiteDatabase.deleteStore(named: "user-\(id)", in: storesDirectory)
    /// ```
    ///
    /// - Returns: Whether there was a store to delete.
    /// - Throws: ``PersistenceError/Code/storeInUse`` while it is open in this process, with nothing deleted;
    ///   ``PersistenceError/Code/invalidName`` for a name a builder would refuse (`../x`, say);
    ///   ``PersistenceError/Code/directoryNotFound``; ``PersistenceError/Code/ioFailure`` when a file can't be removed.
    @discardableResult
    static func deleteStore(named name: String, in directory: URL?) throws -> Bool

    /// The store's main file; `nil` for a store in memory. Files that belong to the store (a sync client's lock, say)
    /// are named after it.
    var storeFileURL: URL? { get }

    /// The names of the stores of this backend in `directory` (the builder's default directory when `nil`), sorted.
    /// - Throws: ``PersistenceError/Code/directoryNotFound`` when the directory doesn't exist.
    static func storeNames(in directory: URL?) throws -> [String]
}

/// Makes a database: validates its inputs, then opens or creates the store.
///
/// Builders are `Sendable` value types — required inputs in `init`, options as properties with defaults — and
/// ``create()`` checks everything before it touches the disk.
public protocol DatabaseBuilder: Sendable {
    /// The database this builder makes.
    associatedtype Database: PersistenceCore.Database

    /// Validates the configuration, then opens (creating when needed) the database.
    /// - Throws: ``PersistenceError`` — invalid names or options, missing or unwritable directories, a store that
    ///   needs a migration or can't be opened.
    func create() throws -> Database
}

extension DatabaseBuilder {
    /// Opens (creating when needed) the database as ``create()`` does, on a thread off the cooperative pool — the
    /// way to open a store that may migrate at start-up from async code.
    ///
    /// A migration checks for cancellation between records: cancelling the task rolls the migration back whole,
    /// leaves the store at its old version, and throws `CancellationError`.
    ///
    /// ```swift
    /// let db = try await builder.open()
    /// ```
    public func open() async throws -> Database {
        try await CancellationFlag.runOffPool { try create() }
    }
}
