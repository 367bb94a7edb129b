@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// The context of a ``SQLiteDatabase``'s transactions: the typed operations every backend has, and raw SQL with
/// bound arguments in the same transaction (`execute(_:_:)`, `rows(_:_:)`, `scalar(_:_:)`).
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws
/// `PersistenceError/Code/contextExpired`.
///
/// ```swift
/// try db.write { context in
///     try context.create(user)
///     try context.execute("UPDATE \"User\" SET \"name\" = ? WHERE \"id\" = ?", [.text("Jane"), .integer(1)])
/// }
/// ```
public typealias SQLiteContext = StoreContext<SQLiteStorage>

/// One SQLite transaction's record-level storage: the fixed statements of each entity's table, cached per connection
/// and bound by index, and the SELECTs, counts and DELETEs its queries compile to.
///
/// Apps never use it by name: it is what ``SQLiteContext`` works through.
public final class SQLiteStorage: RecordStorage {
    let connection: Connection
    let mappings: EntityLookup<TableMapping>
    let instrumentation: Instrumentation
    /// The database's copies of stored vectors (``VectorCache``), or `nil` where nearest queries always scan.
    let vectorCache: VectorCache?
    /// Whether the transaction only reads: only a read copies vectors into ``vectorCache`` (it sees committed data).
    let readsOnly: Bool
    /// How many savepoints are open.
    private var savepointDepth = 0
    /// The copy of vectors the last scan handed out, kept while the transaction lasts so that its bytes do.
    private var vectorsInUse: VectorCache.Entry?

    init(
        connection: Connection, mappings: EntityLookup<TableMapping>, instrumentation: Instrumentation,
        vectorCache: VectorCache? = nil, readsOnly: Bool = false
    ) {
        self.connection = connection
        self.mappings = mappings
        self.instrumentation = instrumentation
        self.vectorCache = vectorCache
        self.readsOnly = readsOnly
    }

    /// After some errors (SQLITE_FULL, SQLITE_IOERR…) SQLite rolls the whole transaction back: never let later
    /// statements run outside it, in autocommit mode.
    @_spi(PersistenceBackend) public func checkUsable(writing: Bool) throws {
        if writing, connection.isAutocommit {
            throw PersistenceError(.backend, "the transaction was rolled back by an earlier error")
        }
    }

    @_spi(PersistenceBackend) public func prepareCommit() throws {}

    @_spi(PersistenceBackend) public func expire() {}

    /// The model's quoted tables when `condition` reaches through a relationship (its subqueries name them).
    func tables(for condition: ResolvedCondition?) -> [String] {
        condition?.isRelated == true ? mappings.all.map(\.table) : []
    }

    /// Logs the SQL a typed operation runs (identifiers and placeholders only) at `.trace`.
    @inline(__always)
    func trace(_ sql: @autoclosure () -> String, _ mapping: TableMapping) {
        instrumentation.trace(sql(), entity: mapping.layout.entity.name)
    }

    /// A table's fixed statement, cached on the connection.
    @inline(__always)
    private func statement(_ operation: TableMapping.Operation, _ mapping: TableMapping) throws -> Statement {
        let statement = try connection.statement(.table(mapping.index, operation)) { mapping.sql(operation) }
        trace(mapping.sql(operation), mapping)
        return statement
    }

    // MARK: - Records by key

    @_spi(PersistenceBackend) public func insert(_ values: [Value], entity: Int) throws {
        try write(values, .insert, mappings.all[entity])
    }

    @_spi(PersistenceBackend) public func update(_ values: [Value], entity: Int) throws -> Bool {
        let mapping = mappings.all[entity]
        try write(values, .update, mapping, key: values[mapping.layout.primaryKeyIndex])
        return connection.changes > 0
    }

    /// Inserts or updates, whichever the stored record calls for — or nothing, when its stamp is newer.
    @_spi(PersistenceBackend) public func upsert(_ values: [Value], entity: Int) throws -> UpsertOutcome {
        let mapping = mappings.all[entity]
        let key = values[mapping.layout.primaryKeyIndex]
        let lookup = try statement(.selectStamp, mapping)
        let stored: Value?
        do {
            defer { lookup.reset() }
            try lookup.bind(key, at: 1)
            stored = try lookup.step() ? lookup.column(0) : nil
        }
        guard let stored else {
            try write(values, .insert, mapping)
            return .inserted
        }
        guard let written = mapping.layout.stampedValues(values, over: stored) else { return .ignoredAsStale }
        try write(written, .update, mapping, key: key)
        return .updated
    }

    /// Runs the insert or the update of a record's values (the update matched by `key`).
    private func write(
        _ values: [Value], _ operation: TableMapping.Operation, _ mapping: TableMapping, key: Value? = nil
    )
        throws
    {
        let statement = try statement(operation, mapping)
        defer { statement.reset() }
        for index in values.indices { try statement.bind(values[index], at: Int32(index + 1)) }
        if let key { try statement.bind(key, at: Int32(values.count + 1)) }
        _ = try statement.step()
    }

    @_spi(PersistenceBackend) public func delete(key: Value, entity: Int) throws -> Bool {
        let statement = try statement(.deleteByID, mappings.all[entity])
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        _ = try statement.step()
        return connection.changes > 0
    }

    /// A statement per 500 keys, listing the keys it deleted when they are wanted.
    @_spi(PersistenceBackend) public func delete(keys: [Value], entity: Int, deleted: ((Value) -> Void)?) throws
        -> Int
    {
        let mapping = mappings.all[entity]
        var count = 0
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + 500, keys.endIndex)
            let placeholders = Array(repeating: "?", count: end - start).joined(separator: ", ")
            let sql =
                "DELETE FROM \(mapping.table) WHERE \(mapping.primaryKeyColumn) IN (\(placeholders))"
                + (deleted == nil ? "" : " RETURNING \(mapping.primaryKeyColumn)")
            let statement = try connection.statement(sql: sql, arguments: end - start)
            trace(sql, mapping)
            defer { statement.reset() }
            try statement.bind(Array(keys[start..<end]))
            if let deleted {
                while try statement.step() {
                    deleted(statement.column(0))
                    count += 1
                }
            } else {
                try statement.run()
                count += connection.changes
            }
            start = end
        }
        return count
    }

    @_spi(PersistenceBackend) public func contains(key: Value, entity: Int) throws -> Bool {
        let lookup = try statement(.selectStamp, mappings.all[entity])
        defer { lookup.reset() }
        try lookup.bind(key, at: 1)
        return try lookup.step()
    }

    /// The statement whose row `read(key:entity:into:)` handed over, reset by `endRead()`.
    private var readStatement: Statement?

    @_spi(PersistenceBackend) public func read(key: Value, entity: Int, into reader: RecordReader) throws
        -> StoredRecord
    {
        let statement = try statement(.selectByID, mappings.all[entity])
        do {
            try statement.bind(key, at: 1)
            guard try statement.step() else {
                statement.reset()
                return .absent
            }
        } catch {
            statement.reset()
            throw error
        }
        readStatement = statement
        return .row(statement)
    }

    @_spi(PersistenceBackend) public func endRead() {
        readStatement?.reset()
        readStatement = nil
    }

    // MARK: - Queries

    @_spi(PersistenceBackend) public func scan(
        _ query: ResolvedQuery, entity: Int, reentrant: Bool, into reader: RecordReader,
        _ visit: ((any RecordRow)?) throws -> Void
    ) throws {
        try forEachRow(query, mappings.all[entity]) { try visit($0) }
    }

    @_spi(PersistenceBackend) public func scanValues(
        _ query: ResolvedQuery, entity: Int, attributes positions: [Int]?, _ visit: ([Value]) throws -> Void
    ) throws {
        var values: [Value] = []
        // A limit per value orders the ranked rows by the sort columns: they must be selected.
        let columns = query.limitPerValue == nil && positions?.isEmpty == false ? positions : nil
        try forEachRow(query, mappings.all[entity], columns: columns) { statement in
            statement.readRow(into: &values)
            guard let positions, columns == nil else { return try visit(values) }
            try visit(positions.map { values[$0] })
        }
    }

    /// The vectors in place: the blob of each selected row read where SQLite holds it, no copy a row — or, for every
    /// record of the entity, from the database's ``VectorCache`` while this connection still sees the data a read
    /// copied there (which an unconditioned scan in a read transaction does).
    @_spi(PersistenceBackend) public func scanVectors(
        at attribute: Int, key: Int, where condition: ResolvedCondition?, entity: Int,
        _ visit: (Value, UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws {
        let query = ResolvedQuery.selecting(condition, key: key)
        guard condition == nil, let vectorCache,
            let vector = mappings.all[entity].layout.vectors.first(where: { $0.position == attribute })
        else {
            return try forEachRow(query, mappings.all[entity], columns: [key, attribute]) { statement in
                guard let bytes = statement.blob(at: 1) else { return }
                // Valid until the next step.
                try visit(statement.value(at: 0), bytes, false)
            }
        }
        // Read in the transaction: the stamp of its snapshot, which the scan below reads too.
        let stamp = VectorCache.Stamp(
            connection: connection.serial, dataVersion: try connection.dataVersion(),
            changes: connection.totalChanges)
        if let entry = vectorCache.entry(entity: entity, attribute: attribute, at: stamp) {
            // Held with the transaction: the bytes it hands out last after the scan (the context ranks in place).
            vectorsInUse = entry
            return try entry.forEach(visit)
        }
        var builder = readsOnly ? VectorCacheBuilder(stride: vector.dimensions * 4, limit: vectorCache.limit) : nil
        try forEachRow(query, mappings.all[entity], columns: [key, attribute]) { statement in
            guard let bytes = statement.blob(at: 1) else { return }
            let key = statement.value(at: 0)
            builder?.add(key: key, bytes: bytes)
            try visit(key, bytes, false)
        }
        if let entry = builder?.build() {
            vectorCache.keep(entry, entity: entity, attribute: attribute, at: stamp)
        }
    }

    /// Runs the SELECT of `query` and calls `row` with the statement on each result row: every column, or those of
    /// the attributes at `columns`, in that order.
    private func forEachRow(
        _ query: ResolvedQuery, _ mapping: TableMapping, columns: [Int]? = nil, _ row: (Statement) throws -> Void
    ) throws {
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: query.condition))
        let sql = compiler.select(query, columns: columns)
        let statement = try connection.statement(sql: sql, arguments: compiler.arguments.count)
        trace(sql, mapping)
        try statement.bind(compiler.arguments)
        // `row` may run other queries on this connection, this one included: while the statement is stepping,
        // the connection hands them a fresh statement rather than resetting this one under the iteration.
        statement.isIterating = true
        defer {
            statement.isIterating = false
            statement.reset()
        }
        while try statement.step() { try row(statement) }
    }

    /// One recursive statement however deep the records refer (see `SQLReferringClosure`).
    @_spi(PersistenceBackend) public func referringClosure(to keys: [Value], entity: Int, foreignKey: Int) throws
        -> [Value]?
    {
        guard !keys.isEmpty else { return [] }
        let mapping = mappings.all[entity]
        let sql = SQLReferringClosure.select(
            table: mapping.table, key: mapping.primaryKeyColumn, foreignKey: quote(mapping.layout.names[foreignKey]),
            seeds: keys.count, dialect: ConditionCompiler.dialect)
        let statement = try connection.statement(sql: sql, arguments: keys.count)
        trace(sql, mapping)
        defer { statement.reset() }
        try statement.bind(keys)
        var found: [Value] = []
        while try statement.step() { found.append(statement.column(0)) }
        return found
    }

    @_spi(PersistenceBackend) public func count(_ condition: ResolvedCondition?, entity: Int) throws -> Int {
        let mapping = mappings.all[entity]
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: condition))
        let sql = compiler.statement("SELECT count(*) FROM", where: condition)
        trace(sql, mapping)
        guard case .integer(let count)? = try connection.scalar(sql, compiler.arguments) else { return 0 }
        return Int(count)
    }

    @_spi(PersistenceBackend) public func delete(
        matching condition: ResolvedCondition?, entity: Int, deleted: ((Value) -> Void)?
    ) throws -> Int {
        let mapping = mappings.all[entity]
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: condition))
        var sql = compiler.statement("DELETE FROM", where: condition)
        guard let deleted else {
            let statement = try connection.statement(sql: sql, arguments: compiler.arguments.count)
            trace(sql, mapping)
            try statement.bind(compiler.arguments)
            try statement.run()
            return connection.changes
        }
        // The statement lists each deleted key as it deletes.
        sql += " RETURNING \(mapping.primaryKeyColumn)"
        let statement = try connection.statement(sql: sql, arguments: compiler.arguments.count)
        trace(sql, mapping)
        defer { statement.reset() }
        try statement.bind(compiler.arguments)
        var count = 0
        while try statement.step() {
            deleted(statement.column(0))
            count += 1
        }
        return count
    }

    // MARK: - Savepoints

    @_spi(PersistenceBackend) public func savepoint<R>(_ body: () throws -> R) throws -> R {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "persistence_savepoint_\(savepointDepth)"
        try connection.execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try connection.execute("RELEASE \(name)")
            return result
        } catch {
            // After some errors SQLite has rolled the whole transaction back already; the write then fails as a whole.
            if !connection.isAutocommit {
                try? connection.execute("ROLLBACK TO \(name)")
                try? connection.execute("RELEASE \(name)")
            }
            throw error
        }
    }
}
