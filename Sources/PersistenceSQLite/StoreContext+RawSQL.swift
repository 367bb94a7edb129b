@_spi(PersistenceBackend) public import PersistenceCore

/// Raw SQL with bound arguments, in the context's transaction.
extension StoreContext where Storage == SQLiteStorage {
    /// Runs one SQL statement with arguments bound to its `?` parameters, in this transaction.
    ///
    /// - Parameters:
    ///   - sql: One statement. Text with a second statement is refused, so a value spliced in by mistake can't
    ///     chain `; DROP TABLE …`.
    ///   - arguments: The values for the statement's parameters, in order.
    /// - Returns: How many rows an INSERT, UPDATE or DELETE changed.
    /// - Throws: `PersistenceError/Code/invalidStatement`, `PersistenceError/Code/readOnly` (a change in a
    ///   read transaction), or what SQLite reports.
    @discardableResult
    public func execute(_ sql: String, _ arguments: [Value] = []) throws -> Int {
        let statement = try prepare(sql)
        try statement.bind(arguments)
        try statement.run()
        guard !statement.isReadOnly else { return 0 }
        // Raw SQL can change any table, its rows unnamed: every observer reads again.
        state.recorder?.recordEverything()
        return storage.connection.changes
    }

    /// The rows of one SQL query with arguments bound to its `?` parameters, in this transaction.
    public func rows(_ sql: String, _ arguments: [Value] = []) throws -> [SQLiteRow] {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        let columns = statement.columnNames
        var rows: [SQLiteRow] = []
        while try statement.step() { rows.append(SQLiteRow(columns: columns, values: statement.row())) }
        return rows
    }

    /// The first column of the first row of one SQL query, or `nil` when there is no row.
    public func scalar(_ sql: String, _ arguments: [Value] = []) throws -> Value? {
        let statement = try prepare(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        return try statement.step() ? statement.column(0) : nil
    }

    private func prepare(_ sql: String) throws -> Statement {
        try use(writing: false)
        // Raw SQL may hold literal values: its text is never logged.
        state.instrumentation.trace("raw SQL statement (text not logged)", entity: "")
        ReadTracker.noteRawStatement()
        let statement = try storage.connection.statement(sql: sql)
        if !statement.isReadOnly {
            try use(writing: true)
        }
        return statement
    }
}

/// One row of a raw SQL query.
public typealias SQLiteRow = ResultRow
