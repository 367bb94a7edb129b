import PersistenceCore

/// The lookups and changes a step's mapping code makes through its ``MappingContext``: source entities read from
/// the tables as they were before the step, destination entities from the step's new tables (or the kept ones).
extension SQLiteMigrationStep: MappingStore {
    func sourceLayout(_ entity: String) -> RecordLayout? { sourceTables[entity]?.layout }

    func destinationLayout(_ entity: String) -> RecordLayout? { destinationTables[entity]?.layout }

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

    func insert(_ record: Record) throws {
        try insertChecked(record.values, into: record.layout)
        try track(record)
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
}
