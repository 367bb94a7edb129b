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

    /// Runs `body` in a read transaction off the cooperative pool.
    @discardableResult
    func read<R: Sendable>(_ body: @escaping @Sendable (Context) throws -> R) async throws -> R

    /// Runs `body` in a write transaction off the cooperative pool: committed when it returns, rolled back when it
    /// throws.
    @discardableResult
    func write<R: Sendable>(_ body: @escaping @Sendable (Context) throws -> R) async throws -> R
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
