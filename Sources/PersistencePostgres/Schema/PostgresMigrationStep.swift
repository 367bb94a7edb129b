@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// The storage of one step of a mapping-model migration on PostgreSQL, inside the advisory-locked transaction that
/// opens the store (nothing here commits; PostgreSQL's DDL is transactional, so a failed step leaves nothing); the
/// core's `MigrationStepRunner` drives it, exactly as on SQLite.
///
/// Every destination entity whose table changes gets a new table in the store's schema, `persistence_new_<n>`,
/// without secondary indexes; inferred copies fill it with one `INSERT … SELECT` on the server, mappings with
/// multi-row inserts of up to 500 records. At the end of the step the source tables not kept are dropped, the new
/// tables renamed (their primary-key index too), and indexes built.
final class PostgresMigrationStep: MigrationStepBackend {
    let connection: ServerConnection
    let schema: String
    let plan: MigrationStepPlan
    /// Tables of the step's source entities.
    private var sourceTables: [String: PostgresTable] = [:]
    /// Tables of the step's destination entities: the new table, or the kept source table.
    private var destinationTables: [String: PostgresTable] = [:]
    /// Destination entities whose tables were changed in place: ``replaceTables()`` leaves them alone.
    private var altered: Set<String> = []
    /// Records mappings wrote and not yet sent, by destination entity: sent in multi-row inserts, and before any
    /// other statement of the step.
    private var pending: [String: [[Value]]] = [:]
    private var pendingCount = 0
    /// Cursors opened so far, for unique names.
    private var cursors = 0

    static let createdTable = "persistence_migration_created"
    /// Rows one multi-row insert sends at most.
    static let insertBatch = 500

    init(connection: ServerConnection, schema: String, plan: MigrationStepPlan) {
        self.connection = connection
        self.schema = schema
        self.plan = plan
        for (index, layout) in plan.source.enumerated() {
            sourceTables[layout.entity.name] = PostgresTable(index: -1 - index, layout: layout, schema: schema)
        }
        for (index, destination) in plan.destinations.enumerated() {
            destinationTables[destination.name] = PostgresTable(
                index: -1 - index, layout: destination.layout, schema: schema,
                tableName: destination.keptSource == nil ? Self.newTable(index) : nil)
        }
    }

    /// The name of the new table of the step's destination entity at `index` (entity names may already use all
    /// 63 bytes of an identifier, so the new table doesn't carry it).
    static func newTable(_ index: Int) -> String { "persistence_new_\(index)" }

    /// The name PostgreSQL gives a table's primary-key index: `<table>_pkey`, the table name shortened (by whole
    /// characters) to fit 63 bytes.
    static func primaryKeyIndex(of table: String) -> String {
        var name = Substring(table)
        while name.utf8.count + "_pkey".utf8.count > 63 { name.removeLast() }
        return name + "_pkey"
    }

    /// The table of an entity of the step's source or destination.
    private func table(_ entity: String, source: Bool) throws -> PostgresTable {
        guard let table = source ? sourceTables[entity] : destinationTables[entity] else {
            throw PersistenceError(
                .unknownEntity, "the migration step has no \(source ? "source" : "destination") entity '\(entity)'")
        }
        return table
    }

    private func run(_ sql: String, _ values: [Value] = []) throws -> PostgresQueryResult {
        try sendPending()
        return try connection.run(sql, values)
    }

    func count(_ layout: RecordLayout, source: Bool) throws -> Int {
        let table = try table(layout.entity.name, source: source)
        let rows = try run("SELECT count(*) FROM \(table.table)").rows
        guard let row = rows.first, case .integer(let count) = try row.values().first else { return 0 }
        return Int(count)
    }

    // MARK: - Changes in place

    /// Changes the source table with `ALTER TABLE` when every kept column keeps its storage class: columns dropped,
    /// renamed and added (with a constant default PostgreSQL adds a column without rewriting the table), `NOT NULL`
    /// set or dropped (after filling `nil`s with the default), indexes the change affects rebuilt, the table renamed.
    /// Only rows whose `nil` takes a default are rewritten.
    func alterInPlace(_ destination: MigrationStepPlan.Destination) throws -> Int? {
        guard let source = destination.inferredSource, let mapping = destination.inferredMapping else { return nil }
        let layout = destination.layout
        let entity = layout.entity
        let sourceName = source.entity.name
        for (position, origin) in mapping.sources.enumerated() {
            if let origin, source.types[origin].storageClass != layout.types[position].storageClass { return nil }
        }
        // A renamed entity takes a name no other source table holds until the end of the step.
        if entity.name != sourceName, plan.source.contains(where: { $0.entity.name == entity.name }) { return nil }
        try sendPending()
        let table = try self.table(sourceName, source: true).table
        let renames = MigrationRules.renames(of: layout, from: source)
        let renamedOld = Set(renames.values)
        // Indexes: kept only when nothing about them changes (their names carry the entity and attribute names).
        let keptIndexes = Set(
            source.entity.indexes.filter { index in
                entity.name == sourceName && entity.indexes.contains(index)
                    && !index.attributes.contains(where: renamedOld.contains)
            })
        for index in source.entity.indexes where !keptIndexes.contains(index) {
            _ = try run("DROP INDEX \(quote(schema)).\(quote(index.name(in: sourceName)))")
        }
        // Columns the destination doesn't keep are dropped first, so a rename can take a dropped column's name;
        // renames go through temporary names, so two columns can swap names.
        let keptColumns = Set(mapping.sources.compactMap { $0 })
        for (position, name) in source.names.enumerated() where !keptColumns.contains(position) {
            _ = try run("ALTER TABLE \(table) DROP COLUMN \(quote(name))")
        }
        let renamed = renames.sorted { $0.key < $1.key }
        for (offset, rename) in renamed.enumerated() {
            _ = try run(
                "ALTER TABLE \(table) RENAME COLUMN \(quote(rename.value)) TO \(quote("persistence_renaming_\(offset)"))"
            )
        }
        for (offset, rename) in renamed.enumerated() {
            _ = try run(
                "ALTER TABLE \(table) RENAME COLUMN \(quote("persistence_renaming_\(offset)")) TO \(quote(rename.key))")
        }
        // Added columns, and nullability.
        let fallbacks = mapping.map(Array(repeating: .null, count: source.names.count))
        var rewrittenRows = 0
        for (position, attribute) in entity.attributes.enumerated() {
            let column = quote(attribute.name)
            let required = !attribute.isOptional || attribute.name == entity.primaryKey
            guard let origin = mapping.sources[position] else {
                let type = PostgresTable.columnType(attribute.type)
                guard !fallbacks[position].isNull else {
                    _ = try run("ALTER TABLE \(table) ADD COLUMN \(column) \(type)")
                    continue
                }
                // The default fills the existing rows without rewriting them; the column then has no default, as
                // in a new store.
                _ = try run(
                    "ALTER TABLE \(table) ADD COLUMN \(column) \(type) DEFAULT \(Self.literal(fallbacks[position]))"
                        + (required ? " NOT NULL" : ""))
                _ = try run("ALTER TABLE \(table) ALTER COLUMN \(column) DROP DEFAULT")
                continue
            }
            let wasRequired =
                !source.entity.attributes[origin].isOptional || source.names[origin] == source.entity.primaryKey
            if required, !wasRequired {
                if !fallbacks[position].isNull {
                    rewrittenRows += ServerConnection.changes(
                        try run("UPDATE \(table) SET \(column) = $1 WHERE \(column) IS NULL", [fallbacks[position]]))
                }
                // A nil left without a default fails here, naming the column, with the step rolled back.
                _ = try run("ALTER TABLE \(table) ALTER COLUMN \(column) SET NOT NULL")
            } else if !required, wasRequired {
                _ = try run("ALTER TABLE \(table) ALTER COLUMN \(column) DROP NOT NULL")
            }
        }
        let final = PostgresTable(index: -1, layout: layout, schema: schema)
        if entity.name != sourceName {
            _ = try run("ALTER TABLE \(table) RENAME TO \(quote(entity.name))")
            _ = try run(
                "ALTER INDEX \(quote(schema)).\(quote(Self.primaryKeyIndex(of: sourceName))) RENAME TO "
                    + quote(Self.primaryKeyIndex(of: entity.name)))
        }
        for sql in final.indexSQL(entity.indexes.filter { !keptIndexes.contains($0) }) { _ = try run(sql) }
        destinationTables[entity.name] = final
        altered.insert(entity.name)
        return rewrittenRows
    }

    /// A constant as SQL: only digits, a float's text and hexadecimal, so nothing of the value is parsed as SQL.
    /// (DDL takes no bound parameters.)
    static func literal(_ value: Value) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let integer): return "'\(integer)'::bigint"
        case .real(let real):
            let text =
                real.isNaN ? "NaN" : real.isInfinite ? (real < 0 ? "-Infinity" : "Infinity") : "\(real)"
            return "'\(text)'::double precision"
        case .text(let text): return "decode('\(hex(Array(text.utf8)))', 'hex')"
        case .blob(let data): return "decode('\(hex(Array(data)))', 'hex')"
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    func createTable(_ destination: RecordLayout) throws {
        _ = try run(try table(destination.entity.name, source: false).tableSQL)
    }

    func copyTable(from source: RecordLayout, to destination: RecordLayout, columns: [(source: Int?, fallback: Value)])
        throws -> Int
    {
        let (expressions, arguments) = copySelectList(columns, from: source, placeholder: { "$\($0)" })
        let target = try table(destination.entity.name, source: false)
        let origin = try table(source.entity.name, source: true)
        let result = try run(
            "INSERT INTO \(target.table) (\(target.columns)) SELECT \(expressions.joined(separator: ", ")) "
                + "FROM \(origin.table)", arguments)
        return ServerConnection.changes(result)
    }

    func forEachSourceRecord(_ layout: RecordLayout, _ body: (Record) throws -> Void) throws {
        let origin = try table(layout.entity.name, source: true)
        var record = Record(layout: layout)
        try forEachRow("SELECT \(origin.columns) FROM \(origin.table)") { row in
            try row.read(as: origin.classes, into: &record.values)
            try body(record)
        }
    }

    /// Calls `body` with each row of a query, fetched through a cursor 500 rows at a time (other statements may run
    /// between rows).
    private func forEachRow(_ sql: String, _ values: [Value] = [], _ body: (PostgresRow) throws -> Void) throws {
        cursors += 1
        let cursor = "persistence_migration_\(cursors)"
        _ = try run("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", values)
        while true {
            let batch = try run("FETCH \(PostgresStorage.fetchSize) FROM \(cursor)").rows
            for row in batch { try body(row) }
            if batch.count < PostgresStorage.fetchSize { break }
        }
        _ = try run("CLOSE \(cursor)")
    }

    /// Queues the values for a multi-row insert; `deferred: false` sends them at once.
    func insert(_ values: [Value], into layout: RecordLayout, deferred: Bool) throws {
        pending[layout.entity.name, default: []].append(values)
        pendingCount += 1
        if !deferred || pendingCount >= Self.insertBatch { try sendPending() }
    }

    /// Sends every queued insert. A key already there fails as `duplicateKey` without aborting the transaction
    /// (`ON CONFLICT DO NOTHING`, then the rows counted), so mapping code that catches it can go on.
    private func sendPending() throws {
        guard pendingCount > 0 else { return }
        let batches = pending
        pending.removeAll(keepingCapacity: true)
        pendingCount = 0
        for (name, rows) in batches.sorted(by: { $0.key < $1.key }) {
            let target = try table(name, source: false)
            // At most 65,535 bound values in one statement.
            let perStatement = max(1, min(Self.insertBatch, 65_535 / max(1, target.layout.names.count)))
            var start = 0
            while start < rows.count {
                let chunk = rows[start..<min(rows.count, start + perStatement)]
                var values: [Value] = []
                values.reserveCapacity(chunk.count * target.layout.names.count)
                var tuples: [String] = []
                for row in chunk {
                    let first = values.count
                    values.append(contentsOf: row)
                    tuples.append("(" + row.indices.map { "$\(first + $0 + 1)" }.joined(separator: ", ") + ")")
                }
                let inserted = try connection.run(
                    "INSERT INTO \(target.table) (\(target.columns)) VALUES \(tuples.joined(separator: ", ")) "
                        + "ON CONFLICT DO NOTHING RETURNING 1", values
                ).rows.count
                guard inserted == chunk.count else {
                    throw PersistenceError(
                        .duplicateKey,
                        "a migrated '\(name)' record has a primary key another record of the step already has")
                }
                start += chunk.count
            }
        }
    }

    // MARK: - Lookups and changes of mapping code

    func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record? {
        let target = try table(layout.entity.name, source: source)
        guard let row = try run(target.selectByIDSQL, [key]).rows.first else { return nil }
        var record = Record(layout: layout)
        try row.read(as: target.classes, into: &record.values)
        return record
    }

    func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record] {
        var compiler = PostgresConditionCompiler(table: try table(layout.entity.name, source: source))
        let sql =
            compiler.statement("SELECT \(compiler.table.columns) FROM", where: condition) + " ORDER BY "
            + compiler.table.primaryKeyColumn
        var records: [Record] = []
        var record = Record(layout: layout)
        for row in try run(sql, compiler.arguments).rows {
            try row.read(as: compiler.table.classes, into: &record.values)
            records.append(record)
        }
        return records
    }

    func update(_ record: Record) throws -> Bool {
        let target = try table(record.entityName, source: false)
        return try !run(target.updateSQL, record.values).rows.isEmpty
    }

    func delete(_ layout: RecordLayout, key: Value) throws -> Bool {
        let target = try table(layout.entity.name, source: false)
        return try !run(target.deleteByIDSQL, [key]).rows.isEmpty
    }

    // MARK: - Records created by custom mappings

    func startTracking() throws {
        _ = try run(
            "CREATE TEMP TABLE \(quote(Self.createdTable)) (seq bigserial PRIMARY KEY, mapping bigint NOT NULL, "
                + "entity bytea NOT NULL, ikey bigint, rkey double precision, bkey bytea) ON COMMIT DROP")
    }

    func track(mapping: Int, entity: String, key: Value) throws {
        // A key goes in the column of its storage class.
        let column =
            switch key {
            case .integer: "ikey"
            case .real: "rkey"
            default: "bkey"
            }
        _ = try run(
            "INSERT INTO pg_temp.\(quote(Self.createdTable)) (mapping, entity, \(column)) VALUES ($1, $2, $3)",
            [.integer(Int64(mapping)), .text(entity), key])
    }

    func trackedCount(mapping: Int) throws -> Int {
        let rows = try run(
            "SELECT count(*) FROM pg_temp.\(quote(Self.createdTable)) WHERE mapping = $1", [.integer(Int64(mapping))]
        ).rows
        guard let row = rows.first, case .integer(let count) = try row.values().first else { return 0 }
        return Int(count)
    }

    func forEachTracked(mapping: Int, _ body: (String, Value) throws -> Void) throws {
        try forEachRow(
            "SELECT entity, ikey, rkey, bkey FROM pg_temp.\(quote(Self.createdTable)) WHERE mapping = $1 ORDER BY seq",
            [.integer(Int64(mapping))]
        ) { row in
            var values: [Value] = []
            try row.read(as: [.text, .integer, .real, .blob], into: &values)
            guard case .text(let entity) = values[0], let layout = destinationTables[entity]?.layout else { return }
            let key: Value =
                switch layout.types[layout.primaryKeyIndex].storageClass {
                case .integer: values[1]
                case .real: values[2]
                case .text:
                    if case .blob(let bytes) = values[3] {
                        .text(String(decoding: bytes, as: UTF8.self))
                    } else {
                        .null
                    }
                case .blob: values[3]
                }
            try body(entity, key)
        }
    }

    func endTracking() throws {
        _ = try run("DROP TABLE pg_temp.\(quote(Self.createdTable))")
    }

    // MARK: - The end of the step

    func replaceTables() throws {
        try sendPending()
        let alteredSources = Set(
            plan.destinations.filter { altered.contains($0.name) }.compactMap { $0.inferredSource?.entity.name })
        for source in plan.droppedSources where !alteredSources.contains(source.entity.name) {
            _ = try run("DROP TABLE \(try table(source.entity.name, source: true).table)")
        }
        for (index, destination) in plan.destinations.enumerated() where !altered.contains(destination.name) {
            let entity = destination.layout.entity
            let final = PostgresTable(index: index, layout: destination.layout, schema: schema)
            guard let kept = destination.keptSource?.entity else {
                let new = Self.newTable(index)
                _ = try run("ALTER TABLE \(quote(schema)).\(quote(new)) RENAME TO \(quote(entity.name))")
                _ = try run(
                    "ALTER INDEX \(quote(schema)).\(quote(Self.primaryKeyIndex(of: new))) RENAME TO "
                        + quote(Self.primaryKeyIndex(of: entity.name)))
                for sql in final.indexSQL(entity.indexes) { _ = try run(sql) }
                destinationTables[destination.name] = final
                continue
            }
            let old = Set(kept.indexes)
            let new = Set(entity.indexes)
            for index in kept.indexes where !new.contains(index) {
                _ = try run("DROP INDEX IF EXISTS \(quote(schema)).\(quote(index.name(in: entity.name)))")
            }
            for sql in final.indexSQL(entity.indexes.filter { !old.contains($0) }) { _ = try run(sql) }
        }
    }

    func renameAliasTargets(from old: String, to new: String) throws {
        _ = try run(
            "UPDATE \(quote(schema)).\(quote(PostgresSchemaStore.aliasTable)) SET entity = $1 WHERE entity = $2",
            [.text(new), .text(old)])
    }
}
