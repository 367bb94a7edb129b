import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// Nearest neighbours ranked in the server, over each vector attribute's table of elements (``PostgresVectorTable``):
/// one statement computes every selected record's distance, sorts, and sends only the window's keys and distances.
extension PostgresStorage {
    /// The window of the ranking, computed by the server; `nil` (the context ranks) for an attribute without a table
    /// of elements.
    /// - Throws: ``PersistenceError/Code/typeMismatch`` when a selected record holds a value that is no vector of the
    ///   attribute's dimensions, named by entity and attribute only.
    @_spi(PersistenceBackend) public func nearest(
        _ distance: VectorDistance, at attribute: Int, where condition: ResolvedCondition?, entity: Int,
        offset: Int, limit: Int?
    ) throws -> [(key: Value, distance: Double)]? {
        let table = tables.all[entity]
        // More dimensions than a table holds: the context ranks what it reads.
        guard let vectors = table.vectorTables.first(where: { $0.attribute == attribute }) else { return nil }
        // Raw SQL changed records (in this transaction, or in one since the table was built): the client ranks what
        // the records hold until an opening builds the table again.
        guard try !rawSQLChanged && vectorTableIsCurrent(vectors) else { return nil }
        if limit == 0 { return [] }
        var compiler = PostgresConditionCompiler(table: table, tables: tables(for: condition))
        let selected = condition.map { compiler.compile($0) }
        var arguments = compiler.arguments
        let first = arguments.count + 1
        arguments += distance.query.map { .real($0) }
        if distance.metric == .cosine { arguments.append(.real(distance.queryNorm)) }
        var sql =
            "SELECT s.key, \(PostgresVectorTable.distanceSQL(distance.metric, dimensions: vectors.dimensions, first: first))"
            + " AS distance, s.squares IS NULL AS refused FROM \(vectors.table) s"
        if let selected {
            sql += " WHERE s.key IN (SELECT \(table.primaryKeyColumn) FROM \(table.table) WHERE \(selected))"
        }
        // A stored value that is no vector sorts first, so that the window can't leave it out unseen.
        sql += " ORDER BY refused DESC, distance, s.key"
        // The window's offset is dropped here, once the rows before it are seen to be vectors.
        if let limit, case (let count, false) = offset.addingReportingOverflow(limit) { sql += " LIMIT \(count)" }
        let keyClass = table.classes[table.layout.primaryKeyIndex]
        var values: [Value] = []
        var ranked: [(key: Value, distance: Double)] = []
        let rows = try withoutJIT { try run(sql, try checked(arguments), entity: table.layout.entity.name).rows }
        for row in rows {
            try row.read(as: [keyClass, .real, .integer], into: &values)
            guard values[2] == .integer(0), case .real(let found) = values[1] else {
                // Named by entity and attribute only: errors never hold stored values (verify() names the record).
                throw PersistenceError(
                    .typeMismatch,
                    "a '\(vectors.entity)' record holds no vector of \(vectors.dimensions) dimensions in "
                        + "'\(vectors.name)' (stored before it was declared so?); verify() lists such records")
            }
            ranked.append((values[0], found))
        }
        return Array(ranked.dropFirst(offset))
    }

    /// Whether `vectors`' table holds the stored vectors: built, and no raw SQL has changed records since.
    private func vectorTableIsCurrent(_ vectors: PostgresVectorTable) throws -> Bool {
        let state = quote(schema) + "." + quote(PostgresSchemaStore.vectorStateTable)
        let rows = try run(
            "SELECT stale::integer FROM \(state) WHERE name = $1", [.text(vectors.tableName)], textAsBytes: false
        ).rows
        guard let row = rows.first else { return false }
        return try row.values().first == .integer(0)
    }

    /// Marks every table of vector elements stale, in the transaction whose raw SQL changed records: from its commit
    /// on, nearest queries rank in the client, and the next opening builds the tables again.
    func markVectorTablesStale() throws {
        guard tables.all.contains(where: { !$0.vectorTables.isEmpty }) else { return }
        let state = quote(schema) + "." + quote(PostgresSchemaStore.vectorStateTable)
        try run("UPDATE \(state) SET stale = true WHERE NOT stale", textAsBytes: false)
    }

    /// Runs `body` with the server's JIT compilation off, then sets back what the transaction had: a ranking's
    /// expression (hundreds of terms) costs more to compile than it saves, and so did a cascade's lateral lookup.
    func withoutJIT<R>(_ body: () throws -> R) throws -> R {
        let jit = try run("SELECT current_setting('jit'), set_config('jit', 'off', true)", textAsBytes: false).rows
        let previous = try jit.first.map { try $0.decode((String, String).self).0 } ?? "on"
        let result = try body()
        try run("SELECT set_config('jit', $1, true)", [.text(previous)], textAsBytes: false)
        return result
    }

    /// Brings the vector tables of `table`'s entity in step with `rows`, records just written (each in layout order):
    /// a record's elements written or replaced, its row deleted when its vector is `nil`.
    func keepVectors(of rows: some Collection<[Value]>, in table: PostgresTable) throws {
        guard !table.vectorTables.isEmpty, !rows.isEmpty else { return }
        let key = table.layout.primaryKeyIndex
        for vectors in table.vectorTables {
            let written = rows.filter { $0[vectors.attribute] != .null }
            try writeVectors(written.map { ($0[key], $0[vectors.attribute]) }, into: vectors)
            let cleared = rows.filter { $0[vectors.attribute] == .null }.map { $0[key] }
            var start = 0
            while start < cleared.count {
                let end = min(start + PostgresVectorTable.rowsPerStatement, cleared.count)
                try run(
                    vectors.deleteSQL(keys: end - start), Array(cleared[start..<end]), entity: table.layout.entity.name)
                start = end
            }
        }
    }

    /// Writes the rows of records with these keys and stored vector values into `vectors`' table; a value that is no
    /// vector of its dimensions gets a row of `NULL`s.
    func writeVectors(_ records: [(key: Value, value: Value)], into vectors: PostgresVectorTable) throws {
        try Self.writeVectors(records, into: vectors) { sql, data in
            instrumentation.trace(sql, entity: vectors.entity)
            try notingFailure { try connection.runPrepared(sql, data: data) }
        }
    }

    /// Writes the rows of `records` into `vectors`' table through `run` (a statement, prepared once per connection,
    /// and its parameters): ``PostgresVectorTable/rowsPerStatement`` records a statement, the rest in statements of
    /// a power of two records — a few statements of a few sizes, so each is parsed and planned once.
    static func writeVectors(
        _ records: [(key: Value, value: Value)], into vectors: PostgresVectorTable,
        run: (String, [PostgresData]) throws -> Void
    ) throws {
        var start = 0
        while start < records.count {
            let left = records.count - start
            let count =
                left >= PostgresVectorTable.rowsPerStatement
                ? PostgresVectorTable.rowsPerStatement : 1 << (Int.bitWidth - 1 - left.leadingZeroBitCount)
            var data: [PostgresData] = []
            data.reserveCapacity(count * 3)
            for (key, value) in records[start..<(start + count)] {
                data.append(PostgresData(typed: key))
                if let (squares, elements) = vectors.elements(of: value) {
                    data.append(PostgresData(double: squares))
                    data.append(PostgresData(realArray: elements))
                } else {
                    data.append(PostgresData(type: .float8))
                    data.append(PostgresData(type: .float4Array))
                }
            }
            try run(vectors.upsertSQL(rows: count), data)
            start += count
        }
    }
}
