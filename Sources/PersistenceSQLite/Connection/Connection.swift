internal import CSQLite
import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// What a cached statement is for.
enum StatementKey: Hashable {
    /// A statement an entity's table mapping prepared (see ``TableMapping/Operation``).
    case table(Int, TableMapping.Operation)
    /// A statement from generated or user SQL text.
    case sql(String)
}

/// Owns one `sqlite3` connection and its prepared statements.
///
/// Not thread-safe by design (opened with `SQLITE_OPEN_NOMUTEX`): the database hands a connection to one
/// transaction at a time, under its writer lock or from its reader pool.
final class Connection {
    let handle: OpaquePointer
    /// Statements of the model's table mappings, at `index × operations + operation`: a typed operation finds its
    /// statement without hashing a key. (A migration's mappings, with negative indexes, use `statements`.)
    ///
    /// Exclusivity is unchecked on the caches: a connection serves one transaction on one thread, and no access to
    /// them overlaps another (the check cost more than the look-up).
    @exclusivity(unchecked) private var tableStatements: [Statement?] = []
    @exclusivity(unchecked) private var statements: [StatementKey: Statement] = [:]
    /// Whether the connection's SQLite has FTS5, and the function full-text searches count with
    /// (``FullTextCounts``): full-text indexes are FTS5 tables then, and searches read the records otherwise.
    let hasFullText: Bool
    /// This connection's number among every connection the process opened: never reused (``VectorCache``'s stamps
    /// name connections by it).
    let serial = Connection.serials.add(1, ordering: .relaxed).newValue
    private static let serials = Atomic<UInt64>(0)
    private var sqlStatementCount = 0
    /// The most statements from free SQL text kept prepared; past this the SQL ones are dropped.
    private static let sqlCacheLimit = 256

    /// Opens a connection.
    /// - Parameters:
    ///   - path: A file path, or `:memory:`.
    ///   - readOnly: Open with `SQLITE_OPEN_READONLY`.
    ///   - busyTimeoutMilliseconds: How long to wait for another process's lock.
    ///   - immutable: Open read-only with the `immutable=1` URI parameter: no lock is taken and no file is made
    ///     beside the database (no `-wal`, no `-shm`); the caller answers for there being no commit in a
    ///     write-ahead log and no writer.
    init(path: String, readOnly: Bool, busyTimeoutMilliseconds: Int32, immutable: Bool = false) throws {
        var db: OpaquePointer?
        var flags =
            (readOnly || immutable ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX
        var name = path
        if immutable {
            // A URI filename: the path's `%`, `?` and `#` are percent-encoded (urlPathAllowed has none of them).
            flags |= SQLITE_OPEN_URI
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            name = (path.hasPrefix("/") ? "file://" : "file:") + encoded + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard let db else {
            throw PersistenceError(.cannotOpen, "SQLite could not allocate a connection", nativeCode: rc)
        }
        // sqlite3_open_v2: "Whether or not an error occurs when it is opened, resources associated with the
        // database connection handle should be released by passing it to sqlite3_close() when it is no longer
        // required." So the handle is closed on every failure below.
        guard rc == SQLITE_OK else {
            let error = SQLiteError.make(rc, db, context: "could not open the database file")
            sqlite3_close_v2(db)
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
        let registered = ExactSumFunctions.register(on: db)
        guard registered == SQLITE_OK else {
            let error = SQLiteError.make(registered, db, context: "could not register the aggregate functions")
            sqlite3_close_v2(db)
            throw error
        }
        hasFullText = FullTextCounts.register(on: db)
        handle = db
    }

    private var isOpen = true

    deinit { close() }

    /// Finalizes the statements and closes the connection (once).
    func close() {
        guard isOpen else { return }
        isOpen = false
        tableStatements.removeAll()
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// A prepared statement for `key`, prepared from `sql()` on first use and then reused.
    ///
    /// While the cached statement is iterating (a `forEach` whose body queries again), a fresh statement is
    /// prepared for this use only: resetting the cached one would restart the iteration under its caller.
    @inline(__always)
    func statement(_ key: StatementKey, _ sql: () -> String) throws -> Statement {
        if case .table(let index, let operation) = key, index >= 0 {
            return try tableStatement(index * TableMapping.Operation.allCases.count + operation.rawValue, sql)
        }
        if let cached = statements[key] {
            guard cached.isIterating else { return cached }
            return try Statement(db: handle, sql: sql(), persistent: false)
        }
        let statement = try Statement(db: handle, sql: sql(), persistent: true)
        if case .sql = key {
            if sqlStatementCount >= Self.sqlCacheLimit {
                statements = statements.filter { if case .table = $0.key { true } else { false } }
                sqlStatementCount = 0
            }
            sqlStatementCount += 1
        }
        statements[key] = statement
        return statement
    }

    /// The cached statement in slot `slot` of `tableStatements`, prepared on first use (see `statement(_:_:)`).
    @inline(__always)
    private func tableStatement(_ slot: Int, _ sql: () -> String) throws -> Statement {
        if slot < tableStatements.count, let cached = tableStatements[slot] {
            guard cached.isIterating else { return cached }
            return try Statement(db: handle, sql: sql(), persistent: false)
        }
        let statement = try Statement(db: handle, sql: sql(), persistent: true)
        if slot >= tableStatements.count {
            tableStatements.append(contentsOf: repeatElement(nil, count: slot + 1 - tableStatements.count))
        }
        tableStatements[slot] = statement
        return statement
    }

    /// A cached statement for free SQL text.
    func statement(sql: String) throws -> Statement { try statement(.sql(sql)) { sql } }

    /// Runs SQL text with no arguments and no rows, such as `BEGIN`.
    func execute(_ sql: String) throws {
        try statement(sql: sql).run()
    }

    /// Runs SQL text that may hold several statements (schema set-up only; no arguments).
    func executeScript(_ sql: String) throws {
        try SQLiteError.check(sqlite3_exec(handle, sql, nil, nil, nil), handle, "could not run a schema script")
    }

    /// The most `?` parameters one statement may have on this connection.
    var maximumArguments: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    /// A cached statement for generated SQL, after checking its argument count fits SQLite's limit.
    func statement(sql: String, arguments: Int) throws -> Statement {
        guard arguments <= maximumArguments else {
            throw PersistenceError(
                .invalidArgument,
                "the query has \(arguments) values; SQLite takes at most \(maximumArguments) in one statement")
        }
        return try statement(sql: sql)
    }

    /// Whether the connection is outside any transaction (SQLite rolls back by itself after some errors).
    var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Rows changed by every INSERT, UPDATE and DELETE this connection ran, triggers' included, whether their
    /// transactions committed or not.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// `PRAGMA data_version`: changes whenever another connection (another process too) commits to the file, never
    /// for this connection's own commits. Read in a transaction, it is the transaction's snapshot's.
    func dataVersion() throws -> Int64 {
        guard case .integer(let version)? = try scalar("PRAGMA data_version") else {
            throw PersistenceError(.backend, "SQLite answered PRAGMA data_version with no integer")
        }
        return version
    }

    /// The first column of the first row of a query, or `nil` when there is no row.
    func scalar(_ sql: String, _ arguments: [Value] = []) throws -> Value? {
        let statement = try statement(sql: sql, arguments: arguments.count)
        defer { statement.reset() }
        try statement.bind(arguments)
        return try statement.step() ? statement.column(0) : nil
    }
}

extension Connection: PooledConnection {
    /// A file's connection is never dropped.
    var isClosed: Bool { false }
}
