@_spi(PersistenceBackend) public import PersistenceCore
import PostgresNIO

/// Raw SQL with bound arguments, in the context's transaction.
extension StoreContext where Storage == PostgresStorage {
    /// Runs one SQL statement with arguments bound to its `$1`, `$2`… parameters, in this transaction.
    ///
    /// Text arguments bind as `text`. The typed tables store text as its UTF-8 in `bytea` columns (PostgreSQL's
    /// `text` can't hold NUL): compare them with `convert_to($1, 'UTF8')`, read them with `convert_from(column,
    /// 'UTF8')`.
    ///
    /// - Parameters:
    ///   - sql: One statement; the server refuses a second one in the same text.
    ///   - arguments: The values for the statement's parameters, in order.
    /// - Returns: How many rows an INSERT, UPDATE or DELETE changed.
    /// - Throws: `PersistenceError/Code/invalidStatement`, `PersistenceError/Code/readOnly` (a change in a read
    ///   transaction), or what the server reports. A failed statement ends the transaction, as PostgreSQL does
    ///   (wrap it in `savepoint` to go on after it).
    @discardableResult
    public func execute(_ sql: String, _ arguments: [Value] = []) throws -> Int {
        let result = try runRaw(sql, arguments)
        switch result.metadata.command {
        case "SELECT", "SHOW", "FETCH", "EXPLAIN", "VALUES": return 0
        default:
            // Raw SQL can change any table, its rows unnamed: every observer reads again, and the tables of vector
            // elements are no longer trusted.
            state.recorder?.recordEverything()
            storage.rawSQLChanged = true
            return ServerConnection.changes(result)
        }
    }

    /// The rows of one SQL query with arguments bound to its `$1`, `$2`… parameters, in this transaction; values by
    /// their PostgreSQL types (integers, reals, `bytea` as blobs, anything else as text).
    public func rows(_ sql: String, _ arguments: [Value] = []) throws -> [PostgresResultRow] {
        let result = try runRaw(sql, arguments)
        if !["SELECT", "SHOW", "FETCH", "EXPLAIN", "VALUES"].contains(result.metadata.command) {
            state.recorder?.recordEverything()
            storage.rawSQLChanged = true
        }
        return try result.rows.map { row in
            PostgresResultRow(columns: row.map(\.columnName), values: try row.values())
        }
    }

    /// The first column of the first row of one SQL query, or `nil` when there is no row.
    public func scalar(_ sql: String, _ arguments: [Value] = []) throws -> Value? {
        try rows(sql, arguments).first?.values.first
    }

    /// The store's PostgreSQL schema.
    package var schemaName: String { storage.schema }

    /// The rows of one statement of the library's own on tables outside the model (the sync server's change log and
    /// clients): unlike raw SQL, it doesn't mark the transaction as having changed any table of the model.
    package func internalRows(_ sql: String, _ arguments: [Value] = []) throws -> [PostgresResultRow] {
        try use(writing: false)
        return try storage.run(sql, arguments, textAsBytes: false, logged: false).rows.map { row in
            PostgresResultRow(columns: row.map(\.columnName), values: try row.values())
        }
    }

    /// The values of the stored records of `type` with these primary keys, each locked `FOR UPDATE` until the
    /// transaction ends (a sync server's push reads so under `READ COMMITTED`).
    package func lockedRecordValues<E: Entity>(_ type: E.Type, keys: [Value]) throws -> [[Value]] {
        try use(writing: true)
        guard !keys.isEmpty else { return [] }
        return try storage.lockedRecordValues(keys: keys, entity: storage.tables.table(for: E.self).index)
    }

    private func runRaw(_ sql: String, _ arguments: [Value]) throws -> PostgresQueryResult {
        try use(writing: false)
        guard arguments.count <= PostgresStorage.maximumParameters else {
            throw PersistenceError(
                .invalidArgument, "PostgreSQL binds at most \(PostgresStorage.maximumParameters) values")
        }
        // Raw SQL may hold literal values: its text is never logged.
        state.instrumentation.trace("raw SQL statement (text not logged)", entity: "")
        ReadTracker.noteRawStatement()
        return try storage.run(sql, arguments, textAsBytes: false, logged: false)
    }
}

/// One row of a raw SQL query.
public typealias PostgresResultRow = ResultRow
