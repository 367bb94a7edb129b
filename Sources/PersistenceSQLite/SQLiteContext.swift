public import PersistenceCore

/// The transaction context of a ``SQLiteDatabase``: the typed operations of `DatabaseContext`, and raw SQL with
/// bound arguments in the same transaction.
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
public final class SQLiteContext: DatabaseContext, RecordValueAccess, TransactionContext {
    let connection: Connection
    let mappings: EntityLookup<TableMapping>
    /// What every backend's context keeps: whether it writes, the change recorder, instrumentation, cancellation.
    let state: ContextState
    // Exclusivity is unchecked on the context's own state: a context is used on one thread, inside its transaction
    // block, and no access to these overlaps another; the dynamic checks cost more than the reads they guard.
    @exclusivity(unchecked) private var isExpired = false
    /// Record readers and writers, reused for every record of the transaction.
    @exclusivity(unchecked) var coders = RecordCoders()
    /// How many savepoints are open.
    private var savepointDepth = 0

    /// Whether this context belongs to a write transaction.
    public var isWritable: Bool { state.isWritable }

    init(
        connection: Connection, mappings: EntityLookup<TableMapping>, recorder: ChangeRecorder?,
        instrumentation: Instrumentation
    ) {
        self.connection = connection
        self.mappings = mappings
        hasRelationships = !mappings.graph.isEmpty
        state = ContextState(recorder: recorder, instrumentation: instrumentation)
    }

    package var graph: ModelGraph { mappings.graph }

    /// The model's quoted tables when `condition` reaches through a relationship (its subqueries name them).
    func tables(for condition: ResolvedCondition?) -> [String] {
        condition?.isRelated == true ? mappings.all.map(\.table) : []
    }
    /// Whether the model declares relationships: writes check foreign keys and deletes apply rules only then, so a
    /// model without any pays one test of this flag per operation.
    private let hasRelationships: Bool

    package func expire() { isExpired = true }

    package func prepareCommit() throws {}

    private func reader(for mapping: TableMapping) -> RecordReader { coders.reader(for: mapping.layout) }

    /// The connection, after checking the context may be used (and may write, when `writing`).
    @inline(__always)
    func use(writing: Bool) throws -> Connection {
        guard !isExpired, !writing || state.isWritable else {
            throw state.refusal(writing: writing, expired: isExpired)
        }
        // After some errors (SQLITE_FULL, SQLITE_IOERR…) SQLite rolls the whole transaction back: never let later
        // statements run outside it, in autocommit mode.
        if writing, connection.isAutocommit {
            throw PersistenceError(.backend, "the transaction was rolled back by an earlier error")
        }
        return connection
    }

    // MARK: - Typed operations

    public func create<E: Entity>(_ entity: E) throws {
        try annotated("insert", E.self) {
            _ = try use(writing: true)
            let mapping = try mappings.mapping(for: E.self)
            let values = try coders.writer(for: mapping.layout).encode(entity)
            if hasRelationships { try checkReferences(values, of: E.self) }
            try write(values, .insert, mapping)
            state.recorder?.record(.insert, mapping.layout, key: values[mapping.layout.primaryKeyIndex])
        }
    }

    public func create<E: Entity, S: Sequence<E>>(_ entities: S) throws {
        try annotated("insert", E.self) { try createAll(entities) }
    }

    private func createAll<E: Entity, S: Sequence<E>>(_ entities: S) throws {
        let connection = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let statement = try connection.statement(.table(mapping.index, .insert)) { mapping.sql(.insert) }
        trace(mapping.sql(.insert), mapping)
        defer { statement.reset() }
        for entity in entities {
            try state.cancellation?.check()
            let values = try bindRecord(entity, mapping: mapping, to: statement)
            if hasRelationships { try checkReferences(values, of: E.self) }
            _ = try statement.step()
            statement.reset()
            state.recorder?.record(.insert, mapping.layout, key: values[mapping.layout.primaryKeyIndex])
        }
    }

    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        var outcome = UpsertOutcome.inserted
        try annotated("upsert", E.self) { outcome = try upsertOne(entity) }
        return outcome
    }

    /// Inserts or updates, whichever the stored record calls for — or nothing, when its stamp is newer.
    private func upsertOne<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        let connection = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let layout = mapping.layout
        let values = try coders.writer(for: layout).encode(entity)
        if hasRelationships { try checkReferences(values, of: E.self) }
        let key = values[layout.primaryKeyIndex]
        let lookup = try connection.statement(.table(mapping.index, .selectStamp)) { mapping.sql(.selectStamp) }
        trace(mapping.sql(.selectStamp), mapping)
        let stored: Value?
        do {
            defer { lookup.reset() }
            try lookup.bind(key, at: 1)
            stored = try lookup.step() ? lookup.column(0) : nil
        }
        guard let stored else {
            try write(values, .insert, mapping)
            state.recorder?.record(.insert, layout, key: key)
            return .inserted
        }
        guard let written = layout.stampedValues(values, over: stored) else { return .ignoredAsStale }
        try write(written, .update, mapping, key: key)
        state.recorder?.record(.update, layout, key: key)
        return .updated
    }

    /// Runs the insert or the update of a record's values (the update matched by `key`).
    private func write(
        _ values: [Value], _ operation: TableMapping.Operation, _ mapping: TableMapping, key: Value? = nil
    )
        throws
    {
        let statement = try connection.statement(.table(mapping.index, operation)) { mapping.sql(operation) }
        trace(mapping.sql(operation), mapping)
        defer { statement.reset() }
        for index in values.indices { try statement.bind(values[index], at: Int32(index + 1)) }
        if let key { try statement.bind(key, at: Int32(values.count + 1)) }
        _ = try statement.step()
    }

    public func update<E: Entity>(_ entity: E) throws {
        try annotated("update", E.self) { try updateOne(entity) }
    }

    private func updateOne<E: Entity>(_ entity: E) throws {
        let connection = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let statement = try connection.statement(.table(mapping.index, .update)) { mapping.sql(.update) }
        trace(mapping.sql(.update), mapping)
        defer { statement.reset() }
        let values = try bindRecord(entity, mapping: mapping, to: statement)
        if hasRelationships { try checkReferences(values, of: E.self) }
        try statement.bind(entity.id.storedValue, at: Int32(values.count + 1))
        _ = try statement.step()
        guard connection.changes > 0 else {
            throw PersistenceError(.notFound, "no \(mapping.layout.entity.name) has that primary key")
        }
        state.recorder?.record(.update, mapping.layout, key: values[mapping.layout.primaryKeyIndex])
    }

    public func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        let connection = try use(writing: false)
        let mapping = try mappings.mapping(for: E.self)
        let statement = try connection.statement(.table(mapping.index, .selectByID)) { mapping.sql(.selectByID) }
        trace(mapping.sql(.selectByID), mapping)
        defer { statement.reset() }
        try statement.bind(id.storedValue, at: 1)
        guard try statement.step() else { return nil }
        return try reader(for: mapping).decode(E.self, in: statement)
    }

    // Inlinable so the array is of the app's own entity type: built in generic code, each append looked up the
    // array's type metadata (about 300 instructions a record).
    @inlinable
    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        var entities: [E] = []
        try forEachDecoded(type, query: query) { (entity: consuming E) in entities.append(entity) }
        return entities
    }

    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        try forEachDecoded(type, query: query) { try body($0) }
    }

    /// ``forEach(_:query:_:)`` handing each entity over to `body`: an array appends it without a copy.
    @usableFromInline
    func forEachDecoded<E: Entity>(_ type: E.Type, query: Query, _ body: (consuming E) throws -> Void) throws {
        let reader = reader(for: try mappings.mapping(for: E.self))
        try forEachRow(of: type, query: query) { statement, _ in
            try body(reader.decode(E.self, in: statement))
        }
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, _ body: ([Value]) throws -> Void
    ) throws {
        var values: [Value] = []
        try forEachRow(of: type, query: query) { statement, _ in
            statement.readRow(into: &values)
            try body(values)
        }
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, attributes positions: [Int], _ body: ([Value]) throws -> Void
    ) throws {
        var values: [Value] = []
        // A limit per value orders the ranked rows by the sort columns: they must be selected.
        let columns = query.limitPerValue == nil && !positions.isEmpty ? positions : nil
        try forEachRow(of: type, query: query, columns: columns) { statement, _ in
            statement.readRow(into: &values)
            try body(columns == nil ? positions.map { values[$0] } : values)
        }
    }

    /// Runs the SELECT of `query` and calls `row` with the statement on each result row: every column, or those of
    /// the attributes at `columns`, in that order.
    private func forEachRow<E: Entity>(
        of type: E.Type, query: Query, columns: [Int]? = nil, _ row: (Statement, TableMapping) throws -> Void
    ) throws {
        let connection = try use(writing: false)
        let mapping = try mappings.mapping(for: E.self)
        let resolved = try query.resolve(in: mapping.layout, graph: graph)
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: resolved.condition))
        let sql = compiler.select(resolved, columns: columns)
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
        while try statement.step() {
            try state.cancellation?.check()
            try row(statement, mapping)
        }
    }

    public func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        let connection = try use(writing: false)
        let mapping = try mappings.mapping(for: E.self)
        let resolved = try condition?.resolve(in: mapping.layout, graph: graph)
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: resolved))
        let sql = compiler.statement("SELECT count(*) FROM", where: resolved)
        trace(sql, mapping)
        guard case .integer(let count)? = try connection.scalar(sql, compiler.arguments) else { return 0 }
        return Int(count)
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        guard hasRelationships else { return try deleteRecord(type, key: id.storedValue) }
        return try deleteRecordFollowingRules(type, key: id.storedValue)
    }

    package func requireWritable() throws { _ = try use(writing: true) }

    package func containsRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        let connection = try use(writing: false)
        let mapping = try mappings.mapping(for: E.self)
        let lookup = try connection.statement(.table(mapping.index, .selectStamp)) { mapping.sql(.selectStamp) }
        trace(mapping.sql(.selectStamp), mapping)
        defer { lookup.reset() }
        try lookup.bind(key, at: 1)
        return try lookup.step()
    }

    package func replaceRecord<E: Entity>(_ type: E.Type, values: [Value]) throws {
        _ = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let key = values[mapping.layout.primaryKeyIndex]
        try write(values, .update, mapping, key: key)
        state.recorder?.record(.update, mapping.layout, key: key)
    }

    package func deleteRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        let connection = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let statement = try connection.statement(.table(mapping.index, .deleteByID)) { mapping.sql(.deleteByID) }
        trace(mapping.sql(.deleteByID), mapping)
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        _ = try statement.step()
        guard connection.changes > 0 else { return false }
        state.recorder?.record(.delete, mapping.layout, key: key)
        return true
    }

    // MARK: - Savepoints

    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        let connection = try use(writing: true)
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "persistence_savepoint_\(savepointDepth)"
        try connection.execute("SAVEPOINT \(name)")
        let mark = state.recorder?.mark()
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
            if let mark { state.recorder?.rollBack(to: mark) }
            throw error
        }
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        _ = try use(writing: true)
        if hasRelationships, try hasDeleteRules(type) { return try deleteFollowingRules(type, where: condition) }
        return try deleteRecords(type, where: condition)
    }

    package func deleteRecords<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        let connection = try use(writing: true)
        let mapping = try mappings.mapping(for: E.self)
        let resolved = try condition?.resolve(in: mapping.layout, graph: graph)
        var compiler = ConditionCompiler(mapping: mapping, tables: tables(for: resolved))
        var sql = compiler.statement("DELETE FROM", where: resolved)
        guard let recorder = state.recorder, recorder.recordsKeys else {
            let statement = try connection.statement(sql: sql, arguments: compiler.arguments.count)
            trace(sql, mapping)
            try statement.bind(compiler.arguments)
            try statement.run()
            if connection.changes > 0 { state.recorder?.recordUntracked(mapping.layout) }
            return connection.changes
        }
        // Change-set observers want each deleted key: the statement lists them as it deletes.
        sql += " RETURNING \(mapping.primaryKeyColumn)"
        let statement = try connection.statement(sql: sql, arguments: compiler.arguments.count)
        trace(sql, mapping)
        defer { statement.reset() }
        try statement.bind(compiler.arguments)
        var count = 0
        while try statement.step() {
            recorder.record(.delete, mapping.layout, key: statement.column(0))
            count += 1
        }
        return count
    }

    /// Logs the SQL a typed operation runs (identifiers and placeholders only) at `.trace`.
    @inline(__always)
    func trace(_ sql: @autoclosure () -> String, _ mapping: TableMapping) {
        state.instrumentation.trace(sql(), entity: mapping.layout.entity.name)
    }

    /// Names the operation and entity in an engine error whose message only says a statement failed.
    private func annotated<E: Entity>(_ operation: String, _ type: E.Type, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch var error as PersistenceError where error.nativeCode != nil {
            error.message = "could not \(operation) a '\(E.entityName)' record"
            throw error
        }
    }

    /// Encodes an entity and binds its values to parameters 1…n; returns the values.
    @discardableResult
    @inline(__always)
    private func bindRecord<E: Entity>(_ entity: E, mapping: TableMapping, to statement: Statement) throws -> [Value] {
        let values = try coders.writer(for: mapping.layout).encode(entity)
        for index in values.indices { try statement.bind(values[index], at: Int32(index + 1)) }
        return values
    }
}
