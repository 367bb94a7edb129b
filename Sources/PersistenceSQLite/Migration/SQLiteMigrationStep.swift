import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// The storage of one step of a mapping-model migration on the writer connection, inside the transaction that
/// opens the store (nothing here commits); the core's `MigrationStepRunner` drives it.
///
/// Every destination entity whose table changes gets a new table, `persistence_new_<entity>`, without indexes; at
/// the end of the step the source tables not kept are dropped, the new tables renamed, and indexes built —
/// SQLite's documented way to change a table, all in the one transaction.
final class SQLiteMigrationStep: MigrationStepBackend {
    let connection: Connection
    let plan: MigrationStepPlan
    /// Tables of the step's destination entities: the new table, or the kept source table.
    private var destinationTables: [String: TableMapping] = [:]
    /// Tables of the step's source entities.
    private var sourceTables: [String: TableMapping] = [:]
    /// Each destination entity's insert statement, prepared for this step only.
    private var inserts: [String: Statement] = [:]
    private var tracking: Statement?

    static let createdTable = "persistence_migration_created"

    init(connection: Connection, plan: MigrationStepPlan) {
        self.connection = connection
        self.plan = plan
        for (index, layout) in plan.source.enumerated() {
            sourceTables[layout.entity.name] = TableMapping(index: -1 - index, layout: layout)
        }
        for (index, destination) in plan.destinations.enumerated() {
            destinationTables[destination.name] = TableMapping(
                index: -1 - index, layout: destination.layout,
                table: destination.keptSource == nil ? Self.newTable(destination.name) : nil)
        }
    }

    static func newTable(_ entity: String) -> String { "persistence_new_" + entity }

    /// The table of an entity of the step's source or destination.
    private func table(_ entity: String, source: Bool) throws -> TableMapping {
        guard let mapping = source ? sourceTables[entity] : destinationTables[entity] else {
            throw PersistenceError(
                .unknownEntity, "the migration step has no \(source ? "source" : "destination") entity '\(entity)'")
        }
        return mapping
    }

    func count(_ layout: RecordLayout, source: Bool) throws -> Int {
        let table = try table(layout.entity.name, source: source).table
        guard case .integer(let count)? = try connection.scalar("SELECT count(*) FROM \(table)") else { return 0 }
        return Int(count)
    }

    func createTable(_ destination: RecordLayout) throws {
        try connection.execute(
            TableMapping.tableSQL(destination.entity, table: try table(destination.entity.name, source: false).table))
    }

    func copyTable(from source: RecordLayout, to destination: RecordLayout, columns: [(source: Int?, fallback: Value)])
        throws -> Int
    {
        let (expressions, arguments) = copySelectList(columns, from: source, placeholder: { _ in "?" })
        let target = try table(destination.entity.name, source: false)
        let origin = try table(source.entity.name, source: true)
        let statement = try Statement(
            db: connection.handle,
            sql: "INSERT INTO \(target.table) (\(target.columns)) SELECT \(expressions.joined(separator: ", ")) "
                + "FROM \(origin.table)",
            persistent: false)
        try statement.bind(arguments)
        try statement.run()
        return connection.changes
    }

    func forEachSourceRecord(_ layout: RecordLayout, _ body: (Record) throws -> Void) throws {
        let origin = try table(layout.entity.name, source: true)
        let statement = try Statement(
            db: connection.handle, sql: "SELECT \(origin.columns) FROM \(origin.table)", persistent: false)
        var record = Record(layout: layout)
        while try statement.step() {
            statement.readRow(into: &record.values)
            try body(record)
        }
    }

    /// SQLite inserts at once, `deferred` or not: a statement costs no round trip.
    func insert(_ values: [Value], into layout: RecordLayout, deferred: Bool) throws {
        let name = layout.entity.name
        let statement: Statement
        if let prepared = inserts[name] {
            statement = prepared
        } else {
            statement = try Statement(
                db: connection.handle, sql: try table(name, source: false).sql(.insert), persistent: false)
            inserts[name] = statement
        }
        defer { statement.reset() }
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        _ = try statement.step()
    }

    // MARK: - Lookups and changes of mapping code

    func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record? {
        let target = try table(layout.entity.name, source: source)
        let statement = try connection.statement(sql: target.sql(.selectByID))
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return try Record(layout: layout, values: statement.row())
    }

    func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record] {
        var compiler = ConditionCompiler(mapping: try table(layout.entity.name, source: source))
        let sql =
            compiler.statement("SELECT \(compiler.mapping.columns) FROM", where: condition) + " ORDER BY "
            + compiler.mapping.primaryKeyColumn
        let statement = try Statement(db: connection.handle, sql: sql, persistent: false)
        try statement.bind(compiler.arguments)
        var records: [Record] = []
        while try statement.step() { records.append(try Record(layout: layout, values: statement.row())) }
        return records
    }

    func update(_ record: Record) throws -> Bool {
        let target = try table(record.entityName, source: false)
        let statement = try connection.statement(sql: target.sql(.update))
        try statement.bind(record.values + [record.primaryKey])
        try statement.run()
        return connection.changes > 0
    }

    func delete(_ layout: RecordLayout, key: Value) throws -> Bool {
        let statement = try connection.statement(sql: try table(layout.entity.name, source: false).sql(.deleteByID))
        try statement.bind([key])
        try statement.run()
        return connection.changes > 0
    }

    // MARK: - Records created by custom mappings

    func startTracking() throws {
        try connection.execute(
            "CREATE TEMP TABLE \(quote(Self.createdTable)) (mapping INTEGER NOT NULL, entity TEXT NOT NULL, key)")
        tracking = try Statement(
            db: connection.handle,
            sql: "INSERT INTO temp.\(quote(Self.createdTable)) (mapping, entity, key) VALUES (?, ?, ?)",
            persistent: false)
    }

    func track(mapping: Int, entity: String, key: Value) throws {
        guard let tracking else { return }
        defer { tracking.reset() }
        try tracking.bind([.integer(Int64(mapping)), .text(entity), key])
        _ = try tracking.step()
    }

    func trackedCount(mapping: Int) throws -> Int {
        guard
            case .integer(let total)? = try connection.scalar(
                "SELECT count(*) FROM temp.\(quote(Self.createdTable)) WHERE mapping = ?", [.integer(Int64(mapping))])
        else { return 0 }
        return Int(total)
    }

    func forEachTracked(mapping: Int, _ body: (String, Value) throws -> Void) throws {
        let created = try Statement(
            db: connection.handle,
            sql: "SELECT entity, key FROM temp.\(quote(Self.createdTable)) WHERE mapping = ? ORDER BY rowid",
            persistent: false)
        try created.bind([.integer(Int64(mapping))])
        while try created.step() {
            guard case .text(let entity) = created.column(0) else { continue }
            try body(entity, created.column(1))
        }
    }

    func endTracking() throws {
        tracking = nil
        try connection.execute("DROP TABLE temp.\(quote(Self.createdTable))")
    }

    // MARK: - The end of the step

    func replaceTables() throws {
        inserts.removeAll()
        for source in plan.droppedSources {
            try connection.execute("DROP TABLE \(quote(source.entity.name))")
        }
        for destination in plan.destinations {
            let entity = destination.layout.entity
            guard let kept = destination.keptSource?.entity else {
                try connection.execute(
                    "ALTER TABLE \(quote(Self.newTable(destination.name))) RENAME TO \(quote(destination.name))")
                for sql in TableMapping.indexSQL(entity.indexes, of: entity) { try connection.execute(sql) }
                continue
            }
            let old = Set(kept.indexes)
            let new = Set(entity.indexes)
            for index in kept.indexes where !new.contains(index) {
                try connection.execute("DROP INDEX IF EXISTS \(quote(index.name(in: entity.name)))")
            }
            for sql in TableMapping.indexSQL(entity.indexes.filter { !old.contains($0) }, of: entity) {
                try connection.execute(sql)
            }
        }
        // Every destination entity is in its own table now.
        for (index, destination) in plan.destinations.enumerated() {
            destinationTables[destination.name] = TableMapping(index: -1 - index, layout: destination.layout)
        }
    }

    func renameAliasTargets(from old: String, to new: String) throws {
        // The alias table is made with the first alias.
        let table = SQLiteStorage.aliasTable
        guard
            try connection.scalar(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(table)])
                != .integer(0)
        else { return }
        _ = try connection.scalar("UPDATE \(quote(table)) SET entity = ? WHERE entity = ?", [.text(new), .text(old)])
    }
}
