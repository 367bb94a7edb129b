import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// A migration block's scratch storage on PostgreSQL: one temporary table per entity (dropped at the commit, or with
/// the rollback, of the advisory-locked transaction that opens the store), keyed by the entity's primary key in its
/// column type — so keys sort as the stored table's do — with the new and old values as one `bytea` each, in the
/// values' JSON form (`{"i": 42}`…), which keeps a value's storage class whatever the entity's types. The stored
/// tables are read a page at a time in primary-key order.
final class PostgresMigrationScratch: MigrationScratch {
    let connection: ServerConnection
    let schema: String
    /// Each prepared entity's table and its key's storage class.
    private var tables: [String: (table: String, key: StorageClass)] = [:]
    /// The stored tables read, by entity name.
    private var sources: [String: PostgresTable] = [:]
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()
    private let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }()

    init(connection: ServerConnection, schema: String) {
        self.connection = connection
        self.schema = schema
    }

    // MARK: - The stored records

    private func source(_ layout: RecordLayout) -> PostgresTable {
        if let table = sources[layout.entity.name] { return table }
        let table = PostgresTable(index: -1 - sources.count, layout: layout, schema: schema)
        sources[layout.entity.name] = table
        return table
    }

    private func records(_ table: PostgresTable, _ sql: String, _ values: [Value]) throws -> [Record] {
        var records: [Record] = []
        var record = Record(layout: table.layout)
        for row in try connection.run(sql, values).rows {
            try row.read(as: table.classes, into: &record.values)
            records.append(record)
        }
        return records
    }

    func sourceRecords(_ layout: RecordLayout, after: Value?, limit: Int) throws -> [Record] {
        let table = source(layout)
        return try records(
            table,
            "SELECT \(table.columns) FROM \(table.table)"
                + (after == nil ? "" : " WHERE \(table.primaryKeyColumn) > $1")
                + " ORDER BY \(table.primaryKeyColumn) LIMIT \(limit)", after.map { [$0] } ?? [])
    }

    func sourceRecord(_ layout: RecordLayout, key: Value) throws -> Record? {
        let table = source(layout)
        return try records(table, table.selectByIDSQL, [key]).first
    }

    func sourceCount(_ layout: RecordLayout) throws -> Int {
        try rowCount(source(layout).table)
    }

    private func rowCount(_ table: String) throws -> Int {
        guard case .integer(let count)? = try connection.rows("SELECT count(*) FROM \(table)").first?.first else {
            return 0
        }
        return Int(count)
    }

    // MARK: - Scratch records

    private func table(_ entity: String) throws -> (table: String, key: StorageClass) {
        guard let table = tables[entity] else {
            throw PersistenceError(.backend, "the migration has no scratch table for '\(entity)'")
        }
        return table
    }

    func prepare(_ entity: String, keyType: AttributeType, newCount: Int, oldCount: Int) throws {
        // Entity names may use all 63 bytes of an identifier: the table doesn't carry it.
        let table = quote("persistence_block_\(tables.count)")
        try connection.execute(
            "CREATE TEMP TABLE \(table) (k \(PostgresTable.columnType(keyType)) PRIMARY KEY, n bytea NOT NULL, "
                + "o bytea) ON COMMIT DROP")
        tables[entity] = (table, keyType.storageClass)
    }

    private func encode(_ values: [Value]) throws -> Value { .blob(try encoder.encode(values)) }

    private func decode(_ value: Value) throws -> [Value] {
        guard case .blob(let data) = value else {
            throw PersistenceError(.backend, "a migration's scratch record is damaged")
        }
        return try decoder.decode([Value].self, from: data)
    }

    func put(_ entity: String, key: Value, new: [Value], old: [Value]?, replacing: Bool) throws -> Bool {
        let table = try table(entity).table
        let conflict = replacing ? "(k) DO UPDATE SET n = excluded.n, o = excluded.o" : "DO NOTHING"
        return try !connection.run(
            "INSERT INTO \(table) (k, n, o) VALUES ($1, $2, $3) ON CONFLICT \(conflict) RETURNING 1",
            [key, try encode(new), try old.map(encode) ?? .null]
        ).rows.isEmpty
    }

    func records(_ entity: String, after: Value?, limit: Int) throws -> [MigrationScratchRecord] {
        let (table, keyClass) = try table(entity)
        let rows = try connection.run(
            "SELECT k, n, o FROM \(table)" + (after == nil ? "" : " WHERE k > $1") + " ORDER BY k LIMIT \(limit)",
            after.map { [$0] } ?? []
        ).rows
        var values: [Value] = []
        return try rows.map { row in
            try row.read(as: [keyClass, .blob, .blob], into: &values)
            return MigrationScratchRecord(
                key: values[0], new: try decode(values[1]), old: values[2].isNull ? nil : try decode(values[2]))
        }
    }

    func delete(_ entity: String, key: Value) throws -> Bool {
        try !connection.run("DELETE FROM \(try table(entity).table) WHERE k = $1 RETURNING 1", [key]).rows.isEmpty
    }

    func count(_ entity: String) throws -> Int { try rowCount(try table(entity).table) }

    func clear(_ entity: String) throws {
        try connection.execute("DELETE FROM \(try table(entity).table)")
    }

    func drop() throws {
        for (_, table) in tables { try connection.execute("DROP TABLE IF EXISTS \(table.table)") }
        tables.removeAll()
    }
}
