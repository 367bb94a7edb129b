import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// The context of a ``PostgresDatabase``'s transactions: the typed operations every backend has, and raw SQL with
/// bound arguments in the same transaction (`execute(_:_:)`, `rows(_:_:)`, `scalar(_:_:)`).
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws
/// `PersistenceError/Code/contextExpired`.
///
/// A statement refused for a user's reason — a duplicate key, a unique index — changes nothing and the transaction
/// goes on, as on the other backends. A failure that ends the transaction on the server (a conflict with a concurrent
/// writer, a dropped connection) is thrown, and every later use of the context throws it again: the write can only
/// roll back.
public typealias PostgresContext = StoreContext<PostgresStorage>

/// One PostgreSQL transaction's record-level storage: each entity's table with its fixed statements prepared once per
/// connection, the SELECTs (through server-side cursors), counts and DELETEs its queries compile to.
///
/// Apps never use it by name: it is what ``PostgresContext`` works through.
public final class PostgresStorage: RecordStorage {
    let connection: ServerConnection
    let tables: EntityLookup<PostgresTable>
    /// The PostgreSQL schema that holds the tables.
    let schema: String
    let instrumentation: Instrumentation
    /// The cancellation flag of the async call this transaction runs for, if any.
    let cancellation = CancellationFlag.current
    /// How many savepoints are open.
    private var savepointDepth = 0
    /// How many `forEach` cursors are open.
    private var cursorDepth = 0
    /// The failure that ended the transaction on the server, if one did.
    var failure: PersistenceError?
    /// Whether raw SQL changed something in this transaction: the tables of vector elements may no longer be the
    /// stored vectors', so they are marked stale when it commits (``markVectorTablesStale()``) and this transaction
    /// ranks in the client.
    var rawSQLChanged = false
    /// Whether the transaction runs `READ COMMITTED` (``PostgresDatabase``'s `writeLockingRows`): its foreign-key
    /// checks then keep the records they find (``lockReferenced(keys:entity:)``).
    @_spi(PersistenceBackend) public let locksReferences: Bool

    /// Rows fetched per round trip by `forEach`.
    static let fetchSize = 500
    /// The most parameters one statement can bind (the protocol counts them in 16 bits).
    static let maximumParameters = 65_535

    init(
        connection: ServerConnection, tables: EntityLookup<PostgresTable>, schema: String,
        instrumentation: Instrumentation, locksReferences: Bool = false
    ) {
        self.locksReferences = locksReferences
        self.connection = connection
        self.tables = tables
        self.schema = schema
        self.instrumentation = instrumentation
    }

    @_spi(PersistenceBackend) public func expire() {}

    /// A statement failed and the block went on: the server has aborted the transaction, which can't commit.
    @_spi(PersistenceBackend) public func prepareCommit() throws {
        try checkUsable()
        if rawSQLChanged { try markVectorTablesStale() }
    }

    @_spi(PersistenceBackend) public func checkUsable(writing: Bool) throws { try checkUsable() }

    /// Throws the failure that ended the transaction on the server, if any.
    func checkUsable() throws {
        guard let failure else { return }
        var error = failure
        error.message =
            "an earlier statement of this transaction failed, so the server rolled it back: \(failure.message)"
        throw error
    }

    /// Runs one statement; a failure ends the transaction (the server aborts it).
    @discardableResult
    func run(
        _ sql: String, _ values: [Value] = [], textAsBytes: Bool = true, entity: String = "", logged: Bool = true
    ) throws -> PostgresQueryResult {
        if logged { instrumentation.trace(sql, entity: entity) }
        return try notingFailure { try connection.run(sql, values, textAsBytes: textAsBytes) }
    }

    /// Runs `body`, noting the first statement failure of the transaction (the server aborts the transaction on it).
    func notingFailure<R>(_ body: () throws -> R) throws -> R {
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
        instrumentation.trace(sql, entity: entity)
        return try notingFailure { try connection.runPrepared(sql, values) }
    }

    /// Runs a fixed statement that a constraint may refuse, in its own savepoint when `guarded`, so that a refusal
    /// leaves the transaction usable.
    private func runGuarded(_ sql: String, _ values: [Value], guarded: Bool, entity: String) throws -> [PostgresRow] {
        guard guarded else { return try runFixed(sql, values, entity: entity) }
        do {
            instrumentation.trace(sql, entity: entity)
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

    /// The model's quoted tables when `condition` reaches through a relationship (its subqueries name them).
    func tables(for condition: ResolvedCondition?) -> [String] {
        condition?.isRelated == true ? tables.all.map(\.table) : []
    }

    // MARK: - Records by key

    /// Inserts a record's values; a refused insert changes nothing and says why.
    @_spi(PersistenceBackend) public func insert(_ values: [Value], entity: Int) throws {
        let table = tables.all[entity]
        let layout = table.layout
        guard try runFixed(table.insertSQL, values, entity: layout.entity.name).isEmpty else {
            return try keepVectors(of: CollectionOfOne(values), in: table)
        }
        // ON CONFLICT DO NOTHING: the primary key or a unique index refused it.
        let key = values[layout.primaryKeyIndex]
        let exists = try !runFixed(table.existsSQL, [key], entity: layout.entity.name).isEmpty
        guard !exists, !table.uniqueIndexNames.isEmpty else {
            throw PersistenceError(
                .duplicateKey, "could not insert a '\(layout.entity.name)' record: its primary key exists")
        }
        throw PersistenceError(
            .uniqueViolation, "could not insert a '\(layout.entity.name)' record: a unique index refused it")
    }

    @_spi(PersistenceBackend) public func update(_ values: [Value], entity: Int) throws -> Bool {
        let table = tables.all[entity]
        let updated: Bool
        do {
            updated = try !runGuarded(
                table.updateSQL, values, guarded: !table.uniqueIndexNames.isEmpty, entity: table.layout.entity.name
            ).isEmpty
        } catch let error as PersistenceError {
            throw annotated(error, "update", table)
        }
        if updated { try keepVectors(of: CollectionOfOne(values), in: table) }
        return updated
    }

    /// One statement: the insert, or the update its stamp condition allows.
    @_spi(PersistenceBackend) public func upsert(_ values: [Value], entity: Int) throws -> UpsertOutcome {
        let table = tables.all[entity]
        let result: [PostgresRow]
        do {
            result = try runGuarded(
                table.upsertSQL, values, guarded: !table.uniqueIndexNames.isEmpty, entity: table.layout.entity.name)
        } catch let error as PersistenceError {
            throw annotated(error, "upsert", table)
        }
        // No row: the stored record's stamp is as new, and it stays.
        guard let cell = result.first?.first else { return .ignoredAsStale }
        try keepVectors(of: CollectionOfOne(values), in: table)
        return try Value(cell, as: .integer) == .integer(1) ? .inserted : .updated
    }

    /// Multi-row statements of up to 500 rows (fewer for wide records: at most 65,535 bound values), one kind for the
    /// rows to insert and one for those to replace; full ones prepared once per connection.
    @_spi(PersistenceBackend) public func put(_ rows: [[Value]], exists: [Bool], entity: Int) throws {
        let table = tables.all[entity]
        let width = table.layout.names.count
        let perStatement = table.putRows
        var values: [Value] = []
        for replacing in [false, true] {
            let chosen = zip(rows, exists).filter { $0.1 == replacing }.map(\.0)
            var start = chosen.startIndex
            while start < chosen.endIndex {
                let end = min(start + perStatement, chosen.endIndex)
                values.removeAll(keepingCapacity: true)
                values.reserveCapacity((end - start) * width)
                for row in chosen[start..<end] { values.append(contentsOf: row) }
                let sql = table.putSQL(rows: end - start, replacing: replacing)
                let result: [PostgresRow]
                do {
                    result =
                        end - start == perStatement
                        ? try runFixed(sql, values, entity: table.layout.entity.name)
                        : try run(sql, values, entity: table.layout.entity.name).rows
                } catch let error as PersistenceError {
                    throw annotated(error, "write", table)
                }
                if !replacing, result.count < end - start {
                    throw PersistenceError(
                        .duplicateKey, "could not insert a '\(table.layout.entity.name)' record: its primary key exists"
                    )
                }
                if replacing,
                    try result.contains(where: { try $0.first.map { try Value($0, as: .integer) } == .integer(1) })
                {
                    throw PersistenceError(.notFound, "no \(table.layout.entity.name) has that primary key")
                }
                try keepVectors(of: chosen[start..<end], in: table)
                start = end
            }
        }
    }

    /// The values of the stored records of `entity` with these primary keys, each locked (`FOR UPDATE`) until the
    /// transaction ends: what a write that decides from them reads under `READ COMMITTED`. A statement per 1,000 keys.
    func lockedRecordValues(keys: [Value], entity: Int) throws -> [[Value]] {
        let table = tables.all[entity]
        var found: [[Value]] = []
        var values: [Value] = []
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + 1_000, keys.endIndex)
            let result = try run(
                table.lockingSelectSQL(keys: end - start), Array(keys[start..<end]), entity: table.layout.entity.name)
            for row in result.rows {
                try row.read(as: table.classes, into: &values)
                found.append(values)
            }
            start = end
        }
        return found
    }

    /// Names the operation and entity in a unique violation, whose server message names only the index.
    private func annotated(_ error: PersistenceError, _ operation: String, _ table: PostgresTable) -> PersistenceError {
        guard error.code == .uniqueViolation else { return error }
        var annotated = error
        annotated.message = "could not \(operation) a '\(table.layout.entity.name)' record: a unique index refused it"
        return annotated
    }

    @_spi(PersistenceBackend) public func delete(key: Value, entity: Int) throws -> Bool {
        let table = tables.all[entity]
        return try !runFixed(table.deleteByIDSQL, [key], entity: table.layout.entity.name).isEmpty
    }

    /// A statement per 500 keys, listing the keys it deleted when they are wanted.
    @_spi(PersistenceBackend) public func delete(keys: [Value], entity: Int, deleted: ((Value) -> Void)?) throws
        -> Int
    {
        let table = tables.all[entity]
        let keyClass = [table.classes[table.layout.primaryKeyIndex]]
        var values: [Value] = []
        var count = 0
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + 500, keys.endIndex)
            let placeholders = (1...(end - start)).map { "$\($0)" }.joined(separator: ", ")
            let sql =
                "DELETE FROM \(table.table) WHERE \(table.primaryKeyColumn) IN (\(placeholders))"
                + (deleted == nil ? "" : " RETURNING \(table.primaryKeyColumn)")
            let result = try run(sql, Array(keys[start..<end]), entity: table.layout.entity.name)
            if let deleted {
                for row in result.rows {
                    try row.read(as: keyClass, into: &values)
                    deleted(values[0])
                    count += 1
                }
            } else {
                count += ServerConnection.changes(result)
            }
            start = end
        }
        return count
    }

    @_spi(PersistenceBackend) public func contains(key: Value, entity: Int) throws -> Bool {
        let table = tables.all[entity]
        return try !runFixed(table.existsSQL, [key], entity: table.layout.entity.name).isEmpty
    }

    /// Under `READ COMMITTED` nothing else keeps a referenced record until the write commits: another push could
    /// delete it, and a serializable deletion that began before would not see the record referring to it. Each found
    /// is locked and updated in place (``PostgresTable/touchingSQL(keys:)``): deletions wait, and a serializable one
    /// fails and runs again. A statement per 1,000 keys, in key order.
    @_spi(PersistenceBackend) public func lockReferenced(keys: [Value], entity: Int) throws -> Set<Value> {
        let table = tables.all[entity]
        let keyClass = [table.classes[table.layout.primaryKeyIndex]]
        let sorted = keys.sorted { Value.compare($0, $1) == .orderedAscending }
        var found = Set<Value>()
        var values: [Value] = []
        var start = sorted.startIndex
        while start < sorted.endIndex {
            let end = min(start + 1_000, sorted.endIndex)
            let result = try run(
                table.touchingSQL(keys: end - start), Array(sorted[start..<end]), entity: table.layout.entity.name)
            for row in result.rows {
                try row.read(as: keyClass, into: &values)
                found.insert(values[0])
            }
            start = end
        }
        return found
    }

    @_spi(PersistenceBackend) public func read(key: Value, entity: Int, into reader: RecordReader) throws
        -> StoredRecord
    {
        let table = tables.all[entity]
        let rows = try runFixed(table.selectByIDSQL, [key], entity: table.layout.entity.name)
        guard let row = rows.first else { return .absent }
        try reader.refill { try row.read(as: table.classes, into: &$0) }
        return .filled
    }

    // MARK: - Queries

    @_spi(PersistenceBackend) public func scan(
        _ query: ResolvedQuery, entity: Int, reentrant: Bool, into reader: RecordReader,
        _ visit: ((any RecordRow)?) throws -> Void
    ) throws {
        let table = tables.all[entity]
        guard !reentrant else {
            return try forEachRow(of: table, query: query) { row in
                try reader.refill { try row.read(as: table.classes, into: &$0) }
                try visit(nil)
            }
        }
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: query.condition))
        let sql = compiler.select(query)
        let arguments = try checked(compiler.arguments)
        instrumentation.trace(sql, entity: table.layout.entity.name)
        // Rows are decoded here as they arrive, while the connection's event loop receives the next ones.
        var decodingFailure: (any Error)?
        do {
            try connection.stream(sql, arguments) { row in
                do {
                    try reader.refill { try row.read(as: table.classes, into: &$0) }
                    try visit(nil)
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
    }

    @_spi(PersistenceBackend) public func scanValues(
        _ query: ResolvedQuery, entity: Int, attributes positions: [Int]?, _ visit: ([Value]) throws -> Void
    ) throws {
        let table = tables.all[entity]
        var values: [Value] = []
        // A limit per value orders the ranked rows by the sort columns: they must be selected.
        guard let positions, query.limitPerValue == nil, !positions.isEmpty else {
            return try forEachRow(of: table, query: query) { row in
                try row.read(as: table.classes, into: &values)
                guard let positions else { return try visit(values) }
                try visit(positions.map { values[$0] })
            }
        }
        let classes = positions.map { table.classes[$0] }
        try forEachRow(of: table, query: query, columns: positions) { row in
            try row.read(as: classes, into: &values)
            try visit(values)
        }
    }

    /// Runs the SELECT of `query` through a server-side cursor, fetching ``fetchSize`` rows at a time, so memory
    /// holds one batch however many rows match. `row` may use the transaction (the cursor waits between fetches).
    /// The rows hold every column, or those of the attributes at `columns`, in that order.
    private func forEachRow(
        of table: PostgresTable, query: ResolvedQuery, columns: [Int]? = nil, _ row: (PostgresRow) throws -> Void
    ) throws {
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: query.condition))
        let sql = compiler.select(query, columns: columns)
        let arguments = try checked(compiler.arguments)
        let entity = table.layout.entity.name
        // A window no larger than a batch needs no cursor.
        if let limit = query.limit, limit <= Self.fetchSize {
            for fetched in try run(sql, arguments, entity: entity).rows {
                try cancellation?.check()
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
                try cancellation?.check()
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

    /// One recursive statement however deep the records refer (see `SQLReferringClosure`).
    @_spi(PersistenceBackend) public func referringClosure(to keys: [Value], entity: Int, foreignKey: Int) throws
        -> [Value]?
    {
        guard !keys.isEmpty else { return [] }
        let table = tables.all[entity]
        let sql = SQLReferringClosure.select(
            table: table.table, key: table.primaryKeyColumn, foreignKey: quote(table.layout.names[foreignKey]),
            seeds: keys.count, dialect: PostgresConditionCompiler.dialect, lateral: true)
        let keyClass = [table.classes[table.layout.primaryKeyIndex]]
        var values: [Value] = []
        // Planned without statistics (a table just filled), the lateral lookup's estimates are large enough for
        // the server to compile it (JIT), which costs more than most cascades take.
        return try withoutJIT {
            try run(sql, try checked(keys), entity: table.layout.entity.name).rows.map { row in
                try row.read(as: keyClass, into: &values)
                return values[0]
            }
        }
    }

    @_spi(PersistenceBackend) public func count(_ condition: ResolvedCondition?, entity: Int) throws -> Int {
        let table = tables.all[entity]
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: condition))
        let sql = compiler.statement("SELECT count(*) FROM", where: condition)
        let rows = try run(sql, try checked(compiler.arguments), entity: table.layout.entity.name).rows
        guard let row = rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }

    @_spi(PersistenceBackend) public func delete(
        matching condition: ResolvedCondition?, entity: Int, deleted: ((Value) -> Void)?
    ) throws -> Int {
        let table = tables.all[entity]
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: condition))
        var sql = compiler.statement("DELETE FROM", where: condition)
        let arguments = try checked(compiler.arguments)
        let entityName = table.layout.entity.name
        guard let deleted else { return ServerConnection.changes(try run(sql, arguments, entity: entityName)) }
        // The statement lists each deleted key as it deletes.
        sql += " RETURNING \(table.primaryKeyColumn)"
        let keyClass = [table.classes[table.layout.primaryKeyIndex]]
        var values: [Value] = []
        let rows = try run(sql, arguments, entity: entityName).rows
        for row in rows {
            try row.read(as: keyClass, into: &values)
            deleted(values[0])
        }
        return rows.count
    }

    // MARK: - Savepoints

    @_spi(PersistenceBackend) public func savepoint<R>(_ body: () throws -> R) throws -> R {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "persistence_savepoint_\(savepointDepth)"
        // Not waited for: the body's first statement (or the `RELEASE`) follows it, and its wait reports a failure.
        let setting = "SAVEPOINT \(name)"
        instrumentation.trace(setting, entity: "")
        try notingFailure { try connection.sendAfterSettling(setting) }
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
