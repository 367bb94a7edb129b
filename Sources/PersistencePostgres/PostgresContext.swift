@_spi(PersistenceBackend) public import PersistenceCore
import PostgresNIO

/// The transaction context of a ``PostgresDatabase``: the typed operations of `DatabaseContext`, and raw SQL with
/// bound arguments in the same transaction.
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws
/// `PersistenceError/Code/contextExpired`.
///
/// A statement refused for a user's reason — a duplicate key, a unique index — changes nothing and the transaction
/// goes on, as on the other backends. A failure that ends the transaction on the server (a conflict with a concurrent
/// writer, a dropped connection) is thrown, and every later use of the context throws it again: the write can only
/// roll back.
public final class PostgresContext: DatabaseContext, RecordValueAccess, TransactionContext {
    let connection: ServerConnection
    let tables: EntityLookup<PostgresTable>
    /// The PostgreSQL schema that holds the tables.
    let schema: String
    /// What every backend's context keeps: whether it writes, the change recorder, instrumentation, cancellation.
    let state: ContextState
    // Exclusivity is unchecked on the context's own state: a context is used on one thread, inside its transaction
    // block, and no access to these overlaps another; the dynamic checks cost more than the reads they guard.
    @exclusivity(unchecked) private var isExpired = false
    /// Record readers and writers, reused for every record of the transaction.
    @exclusivity(unchecked) var coders = RecordCoders()
    /// How many savepoints are open.
    private var savepointDepth = 0
    /// How many `forEach` cursors are open.
    private var cursorDepth = 0
    /// The failure that ended the transaction on the server, if one did.
    var failure: PersistenceError?

    /// Rows fetched per round trip by `forEach`.
    static let fetchSize = 500
    /// The most parameters one statement can bind (the protocol counts them in 16 bits).
    static let maximumParameters = 65_535

    /// Whether this context belongs to a write transaction.
    public var isWritable: Bool { state.isWritable }

    init(
        connection: ServerConnection, tables: EntityLookup<PostgresTable>, schema: String, recorder: ChangeRecorder?,
        instrumentation: Instrumentation
    ) {
        self.connection = connection
        self.tables = tables
        hasRelationships = !tables.graph.isEmpty
        self.schema = schema
        state = ContextState(recorder: recorder, instrumentation: instrumentation)
    }

    package func expire() { isExpired = true }

    /// A statement failed and the block went on: the server has aborted the transaction, which can't commit.
    package func prepareCommit() throws { try checkUsable() }

    /// Throws the failure that ended the transaction on the server, if any.
    func checkUsable() throws {
        guard let failure else { return }
        var error = failure
        error.message =
            "an earlier statement of this transaction failed, so the server rolled it back: \(failure.message)"
        throw error
    }

    /// Checks that the context may be used (and may write, when `writing`).
    @inline(__always)
    func use(writing: Bool) throws {
        guard !isExpired, !writing || state.isWritable else {
            throw state.refusal(writing: writing, expired: isExpired)
        }
        try checkUsable()
    }

    /// Runs one statement; a failure ends the transaction (the server aborts it).
    @discardableResult
    func run(
        _ sql: String, _ values: [Value] = [], textAsBytes: Bool = true, entity: String = "", logged: Bool = true
    ) throws -> PostgresQueryResult {
        if logged { state.instrumentation.trace(sql, entity: entity) }
        return try notingFailure { try connection.run(sql, values, textAsBytes: textAsBytes) }
    }

    /// Runs `body`, noting the first statement failure of the transaction (the server aborts the transaction on it).
    private func notingFailure<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as PersistenceError {
            if failure == nil { failure = error }
            throw error
        }
    }

    /// Runs one of a table's fixed statements, prepared once per connection; a failure ends the transaction.
    @discardableResult
    func runFixed(_ sql: String, _ values: [Value], entity: String) throws -> [PostgresRow] {
        state.instrumentation.trace(sql, entity: entity)
        return try notingFailure { try connection.runPrepared(sql, values) }
    }

    /// Runs a fixed statement that a constraint may refuse, in its own savepoint when `guarded`, so that a refusal
    /// leaves the transaction usable.
    private func runGuarded(_ sql: String, _ values: [Value], guarded: Bool, entity: String) throws -> [PostgresRow] {
        guard guarded else { return try runFixed(sql, values, entity: entity) }
        do {
            state.instrumentation.trace(sql, entity: entity)
            return try connection.runPreparedInSavepoint(
                sql, values, setting: "SAVEPOINT persistence_statement", releasing: "RELEASE persistence_statement")
        } catch let error as PersistenceError where error.endsTransaction {
            // The transaction is over on the server: a conflict or a dropped connection can't be rolled back to here.
            if failure == nil { failure = error }
            throw error
        } catch let error as PersistenceError where !error.endsTransaction {
            try run("ROLLBACK TO persistence_statement")
            try run("RELEASE persistence_statement")
            throw error
        }
    }

    // MARK: - Typed operations

    package var graph: ModelGraph { tables.graph }
    /// The store's schema.
    package var schemaName: String { schema }

    /// The model's quoted tables when `condition` reaches through a relationship (its subqueries name them).
    func tables(for condition: ResolvedCondition?) -> [String] {
        condition?.isRelated == true ? tables.all.map(\.table) : []
    }
    /// Whether the model declares relationships: writes check foreign keys and deletes apply rules only then, so a
    /// model without any pays one test of this flag per operation.
    private let hasRelationships: Bool

    public func create<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let values = try coders.writer(for: table.layout).encode(entity)
        if hasRelationships { try checkReferences(values, of: E.self) }
        try insert(values, into: table)
    }

    public func create<E: Entity, S: Sequence<E>>(_ entities: S) throws {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let writer = coders.writer(for: table.layout)
        for entity in entities {
            try state.cancellation?.check()
            let values = try writer.encode(entity)
            if hasRelationships { try checkReferences(values, of: E.self) }
            try insert(values, into: table)
        }
    }

    /// Inserts a record's values; a refused insert changes nothing and says why.
    private func insert(_ values: [Value], into table: PostgresTable) throws {
        let layout = table.layout
        let key = values[layout.primaryKeyIndex]
        guard try runFixed(table.insertSQL, values, entity: layout.entity.name).isEmpty else {
            state.recorder?.record(.insert, layout, key: key)
            return
        }
        // ON CONFLICT DO NOTHING: the primary key or a unique index refused it.
        let exists = try !runFixed(table.existsSQL, [key], entity: layout.entity.name).isEmpty
        guard !exists, !table.uniqueIndexNames.isEmpty else {
            throw PersistenceError(
                .duplicateKey, "could not insert a '\(layout.entity.name)' record: its primary key exists")
        }
        throw PersistenceError(
            .uniqueViolation, "could not insert a '\(layout.entity.name)' record: a unique index refused it")
    }

    public func update<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let layout = table.layout
        let values = try coders.writer(for: layout).encode(entity)
        if hasRelationships { try checkReferences(values, of: E.self) }
        let updated: [PostgresRow]
        do {
            updated = try runGuarded(
                table.updateSQL, values, guarded: !table.uniqueIndexNames.isEmpty, entity: layout.entity.name)
        } catch let error as PersistenceError {
            throw annotated(error, "update", table)
        }
        guard !updated.isEmpty else {
            throw PersistenceError(.notFound, "no \(layout.entity.name) has that primary key")
        }
        state.recorder?.record(.update, layout, key: values[layout.primaryKeyIndex])
    }

    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let layout = table.layout
        let values = try coders.writer(for: layout).encode(entity)
        if hasRelationships { try checkReferences(values, of: E.self) }
        let result: [PostgresRow]
        do {
            result = try runGuarded(
                table.upsertSQL, values, guarded: !table.uniqueIndexNames.isEmpty, entity: layout.entity.name)
        } catch let error as PersistenceError {
            throw annotated(error, "upsert", table)
        }
        // No row: the stored record's stamp is as new, and it stays.
        guard let cell = result.first?.first else { return .ignoredAsStale }
        let inserted = try Value(cell, as: .integer) == .integer(1)
        let key = values[layout.primaryKeyIndex]
        state.recorder?.record(inserted ? .insert : .update, layout, key: key)
        return inserted ? .inserted : .updated
    }

    /// Names the operation and entity in a unique violation, whose server message names only the index.
    private func annotated(_ error: PersistenceError, _ operation: String, _ table: PostgresTable) -> PersistenceError {
        guard error.code == .uniqueViolation else { return error }
        var annotated = error
        annotated.message = "could not \(operation) a '\(table.layout.entity.name)' record: a unique index refused it"
        return annotated
    }

    public func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        try use(writing: false)
        let table = try tables.table(for: E.self)
        let rows = try runFixed(table.selectByIDSQL, [id.storedValue], entity: table.layout.entity.name)
        guard let row = rows.first else { return nil }
        let reader = coders.reader(for: table.layout)
        try reader.refill { try row.read(as: table.classes, into: &$0) }
        return try reader.decode(E.self)
    }

    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        try use(writing: false)
        let table = try tables.table(for: E.self)
        let resolved = try query.resolve(in: table.layout, graph: graph)
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: resolved.condition))
        let sql = compiler.select(resolved)
        let arguments = try checked(compiler.arguments)
        let entity = table.layout.entity.name
        state.instrumentation.trace(sql, entity: entity)
        // Rows are decoded here as they arrive, while the connection's event loop receives the next ones.
        let reader = coders.reader(for: table.layout)
        var entities: [E] = []
        var decodingFailure: (any Error)?
        do {
            try connection.stream(sql, arguments) { row in
                do {
                    try reader.refill { try row.read(as: table.classes, into: &$0) }
                    entities.append(try reader.decode(E.self))
                } catch {
                    decodingFailure = error
                    throw error
                }
            }
        } catch {
            // A value that doesn't decode fails this call only; a statement the server refused fails the transaction.
            if decodingFailure != nil { throw error }
            if let error = error as? PersistenceError, failure == nil { failure = error }
            throw error
        }
        return entities
    }

    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        let table = try tables.table(for: E.self)
        let reader = coders.reader(for: table.layout)
        try forEachRow(of: table, query: query) { row in
            try reader.refill { try row.read(as: table.classes, into: &$0) }
            try body(reader.decode(E.self))
        }
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, _ body: ([Value]) throws -> Void
    ) throws {
        let table = try tables.table(for: E.self)
        var values: [Value] = []
        try forEachRow(of: table, query: query) { row in
            try row.read(as: table.classes, into: &values)
            try body(values)
        }
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, attributes positions: [Int], _ body: ([Value]) throws -> Void
    ) throws {
        let table = try tables.table(for: E.self)
        var values: [Value] = []
        // A limit per value orders the ranked rows by the sort columns: they must be selected.
        guard query.limitPerValue == nil, !positions.isEmpty else {
            return try forEachRow(of: table, query: query) { row in
                try row.read(as: table.classes, into: &values)
                try body(positions.map { values[$0] })
            }
        }
        let classes = positions.map { table.classes[$0] }
        try forEachRow(of: table, query: query, columns: positions) { row in
            try row.read(as: classes, into: &values)
            try body(values)
        }
    }

    /// Runs the SELECT of `query` through a server-side cursor, fetching ``fetchSize`` rows at a time, so memory
    /// holds one batch however many rows match. `row` may use the context (the cursor waits between fetches). The
    /// rows hold every column, or those of the attributes at `columns`, in that order.
    private func forEachRow(
        of table: PostgresTable, query: Query, columns: [Int]? = nil, _ row: (PostgresRow) throws -> Void
    ) throws {
        try use(writing: false)
        let resolved = try query.resolve(in: table.layout, graph: graph)
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: resolved.condition))
        let sql = compiler.select(resolved, columns: columns)
        let arguments = try checked(compiler.arguments)
        let entity = table.layout.entity.name
        // A window no larger than a batch needs no cursor.
        if let limit = resolved.limit, limit <= Self.fetchSize {
            for fetched in try run(sql, arguments, entity: entity).rows {
                try state.cancellation?.check()
                try row(fetched)
            }
            return
        }
        cursorDepth += 1
        defer { cursorDepth -= 1 }
        let cursor = "persistence_cursor_\(cursorDepth)"
        try run("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", arguments, entity: entity)
        var finished = false
        defer { if !finished, failure == nil { _ = try? run("CLOSE \(cursor)") } }
        while true {
            let batch = try run("FETCH \(Self.fetchSize) FROM \(cursor)", entity: entity).rows
            for fetched in batch {
                try state.cancellation?.check()
                try row(fetched)
            }
            if batch.count < Self.fetchSize { break }
        }
        finished = true
        try run("CLOSE \(cursor)")
    }

    /// The arguments of a compiled statement, when the protocol can bind that many.
    func checked(_ arguments: [Value]) throws -> [Value] {
        guard arguments.count <= Self.maximumParameters else {
            throw PersistenceError(
                .invalidArgument,
                "the condition binds \(arguments.count) values; PostgreSQL binds at most \(Self.maximumParameters)")
        }
        return arguments
    }

    public func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: false)
        let table = try tables.table(for: E.self)
        let resolved = try condition?.resolve(in: table.layout, graph: graph)
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: resolved))
        let sql = compiler.statement("SELECT count(*) FROM", where: resolved)
        let rows = try run(sql, try checked(compiler.arguments), entity: table.layout.entity.name).rows
        guard let row = rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        guard hasRelationships else { return try deleteRecord(type, key: id.storedValue) }
        return try deleteRecordFollowingRules(type, key: id.storedValue)
    }

    package func requireWritable() throws { try use(writing: true) }

    package func containsRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        try use(writing: false)
        let table = try tables.table(for: E.self)
        return try !runFixed(table.existsSQL, [key], entity: table.layout.entity.name).isEmpty
    }

    package func replaceRecord<E: Entity>(_ type: E.Type, values: [Value]) throws {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let layout = table.layout
        let updated = try runGuarded(
            table.updateSQL, values, guarded: !table.uniqueIndexNames.isEmpty, entity: layout.entity.name)
        guard !updated.isEmpty else {
            throw PersistenceError(.notFound, "no \(layout.entity.name) has that primary key")
        }
        state.recorder?.record(.update, layout, key: values[layout.primaryKeyIndex])
    }

    package func deleteRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        guard try !runFixed(table.deleteByIDSQL, [key], entity: table.layout.entity.name).isEmpty else { return false }
        state.recorder?.record(.delete, table.layout, key: key)
        return true
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        if hasRelationships, try hasDeleteRules(type) { return try deleteFollowingRules(type, where: condition) }
        return try deleteRecords(type, where: condition)
    }

    package func deleteRecords<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        let table = try tables.table(for: E.self)
        let resolved = try condition?.resolve(in: table.layout, graph: graph)
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: resolved))
        var sql = compiler.statement("DELETE FROM", where: resolved)
        let arguments = try checked(compiler.arguments)
        let entity = table.layout.entity.name
        guard let recorder = state.recorder, recorder.recordsKeys else {
            let changes = ServerConnection.changes(try run(sql, arguments, entity: entity))
            if changes > 0 { state.recorder?.recordUntracked(table.layout) }
            return changes
        }
        // Change-set observers want each deleted key: the statement lists them as it deletes.
        sql += " RETURNING \(table.primaryKeyColumn)"
        let keyClass = [table.classes[table.layout.primaryKeyIndex]]
        var values: [Value] = []
        let rows = try run(sql, arguments, entity: entity).rows
        for row in rows {
            try row.read(as: keyClass, into: &values)
            recorder.record(.delete, table.layout, key: values[0])
        }
        return rows.count
    }

    // MARK: - Savepoints

    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        try use(writing: true)
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "persistence_savepoint_\(savepointDepth)"
        // Not waited for: the body's first statement (or the `RELEASE`) follows it, and its wait reports a failure.
        let setting = "SAVEPOINT \(name)"
        state.instrumentation.trace(setting, entity: "")
        try notingFailure { try connection.sendAfterSettling(setting) }
        let mark = state.recorder?.mark()
        do {
            let result = try body()
            try checkUsable()
            try run("RELEASE \(name)")
            return result
        } catch {
            // Rolling back to the savepoint also undoes a failure inside it; after a dropped connection it can't.
            // A conflict stays: the server may let the transaction go on, but it can't commit what it read.
            if failure?.endsTransaction != true, (try? connection.run("ROLLBACK TO \(name)")) != nil,
                (try? connection.run("RELEASE \(name)")) != nil
            {
                failure = nil
            }
            if let mark { state.recorder?.rollBack(to: mark) }
            throw error
        }
    }
}

extension PersistenceError {
    /// Whether the server ended the whole transaction (a serialization conflict, a dropped connection): a savepoint
    /// can't undo it, so the write fails whole. Other errors — a refused constraint, a lock or statement timeout — roll
    /// back to the statement's savepoint, and the transaction goes on.
    var endsTransaction: Bool { code == .conflict || code == .connectionLost }
}
