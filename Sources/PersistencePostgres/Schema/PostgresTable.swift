@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// How one entity maps to one PostgreSQL table: its layout and the SQL of its fixed statements, built once per
/// database.
///
/// Identifiers come only from the schema, always quoted and qualified by the store's PostgreSQL schema; values are
/// always bound (`$1…`). Text is stored as its UTF-8 in `bytea` — PostgreSQL's `text` can't hold NUL, and `bytea`
/// orders by bytes, which is code-point order, exactly as the other backends compare text.
final class PostgresTable: Sendable {
    /// The entity's position in the model.
    let index: Int
    let layout: RecordLayout
    /// The quoted, schema-qualified table name.
    let table: String
    /// The quoted column list, in layout order.
    let columns: String
    let primaryKeyColumn: String
    /// Each column's storage class, in layout order: how result cells are read.
    let classes: [StorageClass]
    /// The names of the entity's unique indexes: a unique violation on one of them is not a duplicate key.
    let uniqueIndexNames: Set<String>
    /// The tables of the entity's vector attributes' elements, which the server ranks nearest neighbours over (none
    /// for an attribute of more dimensions than a table holds).
    let vectorTables: [PostgresVectorTable]

    // The fixed statements, prepared once per connection; those that change a row return one `1` per row changed.
    let insertSQL: String
    let updateSQL: String
    let upsertSQL: String
    let selectByIDSQL: String
    let existsSQL: String
    let deleteByIDSQL: String
    /// Rows per multi-row write (`putSQL`): 500, fewer for wide records (at most 65,535 bound values); and the two
    /// statements of that many rows, built once.
    let putRows: Int
    let insertManySQL: String
    let replaceManySQL: String

    /// - Parameter tableName: The table's name when it isn't the entity's (a migration's new table).
    init(index: Int, layout: RecordLayout, schema: String, tableName: String? = nil) {
        self.index = index
        self.layout = layout
        let entity = layout.entity
        table = quote(schema) + "." + quote(tableName ?? entity.name)
        columns = layout.names.map(quote).joined(separator: ", ")
        primaryKeyColumn = quote(entity.primaryKey)
        classes = layout.types.map(\.storageClass)
        uniqueIndexNames = Set(entity.indexes.filter(\.isUnique).map { $0.name(in: entity.name) })
        vectorTables = layout.vectors.compactMap { PostgresVectorTable($0, layout: layout, schema: schema) }

        let placeholders = (1...layout.names.count).map { "$\($0)" }.joined(separator: ", ")
        let keyParameter = "$\(layout.primaryKeyIndex + 1)"
        let others = layout.names.indices.filter { $0 != layout.primaryKeyIndex }
        // DO NOTHING on any unique conflict: a refused insert leaves the transaction usable, as on the other backends.
        insertSQL = "INSERT INTO \(table) (\(columns)) VALUES (\(placeholders)) ON CONFLICT DO NOTHING RETURNING 1"
        let sets = others.map { "\(quote(layout.names[$0])) = $\($0 + 1)" }
        // An entity with only a key has nothing to set: the update then just finds the row.
        updateSQL =
            sets.isEmpty
            ? "UPDATE \(table) SET \(primaryKeyColumn) = \(keyParameter) WHERE \(primaryKeyColumn) = \(keyParameter)"
                + " RETURNING 1"
            : "UPDATE \(table) SET \(sets.joined(separator: ", ")) WHERE \(primaryKeyColumn) = \(keyParameter) RETURNING 1"
        // One statement: insert, or update unless the stored stamp is as new; `xmax = 0` only on a fresh row.
        var upsert = "INSERT INTO \(table) AS stored (\(columns)) VALUES (\(placeholders)) "
        let excludedSets = others.map { position -> String in
            let column = quote(layout.names[position])
            guard position == layout.stampIndex else { return "\(column) = excluded.\(column)" }
            return "\(column) = COALESCE(excluded.\(column), stored.\(column))"
        }
        upsert +=
            "ON CONFLICT (\(primaryKeyColumn)) DO UPDATE SET "
            + (excludedSets.isEmpty
                ? "\(primaryKeyColumn) = excluded.\(primaryKeyColumn)" : excludedSets.joined(separator: ", "))
        if let stamp = layout.stampIndex.map({ quote(layout.names[$0]) }) {
            upsert +=
                " WHERE stored.\(stamp) IS NULL OR excluded.\(stamp) IS NULL OR excluded.\(stamp) > stored.\(stamp)"
        }
        upsertSQL = upsert + " RETURNING (xmax = 0)"
        selectByIDSQL = "SELECT \(columns) FROM \(table) WHERE \(primaryKeyColumn) = $1"
        existsSQL = "SELECT 1 FROM \(table) WHERE \(primaryKeyColumn) = $1"
        deleteByIDSQL = "DELETE FROM \(table) WHERE \(primaryKeyColumn) = $1 RETURNING 1"
        putRows = max(1, min(500, PostgresStorage.maximumParameters / layout.names.count))
        insertManySQL = Self.putSQL(
            layout, table: table, columns: columns, key: primaryKeyColumn, rows: putRows, replacing: false)
        replaceManySQL = Self.putSQL(
            layout, table: table, columns: columns, key: primaryKeyColumn, rows: putRows, replacing: true)
    }

    /// A multi-row insert of `rows` records, returning a `1` per row inserted (a stored key inserts none; another
    /// unique index fails the statement); or, when `replacing`, a multi-row write of records whose stored ones it
    /// replaces, returning per row whether it inserted it instead (`xmax = 0`: none was stored).
    func putSQL(rows: Int, replacing: Bool) -> String {
        guard rows != putRows else { return replacing ? replaceManySQL : insertManySQL }
        return Self.putSQL(
            layout, table: table, columns: columns, key: primaryKeyColumn, rows: rows, replacing: replacing)
    }

    private static func putSQL(
        _ layout: RecordLayout, table: String, columns: String, key: String, rows: Int, replacing: Bool
    ) -> String {
        let width = layout.names.count
        let tuples = (0..<rows).map { row in
            "(" + (1...width).map { "$\(row * width + $0)" }.joined(separator: ", ") + ")"
        }
        let insert = "INSERT INTO \(table) (\(columns)) VALUES \(tuples.joined(separator: ", ")) "
        guard replacing else { return insert + "ON CONFLICT (\(key)) DO NOTHING RETURNING 1" }
        let others = layout.names.indices.filter { $0 != layout.primaryKeyIndex }.map { quote(layout.names[$0]) }
        let sets = (others.isEmpty ? [key] : others).map { "\($0) = excluded.\($0)" }
        return insert + "ON CONFLICT (\(key)) DO UPDATE SET \(sets.joined(separator: ", ")) RETURNING (xmax = 0)"
    }

    /// The stored records with the `keys` primary keys given, each locked `FOR UPDATE`.
    func lockingSelectSQL(keys: Int) -> String {
        "SELECT \(columns) FROM \(table) WHERE \(primaryKeyColumn) IN ("
            + (1...keys).map { "$\($0)" }.joined(separator: ", ") + ") FOR UPDATE"
    }

    /// Keeps the stored records with the `keys` primary keys given until the transaction ends, returning their keys:
    /// locked in key order (`FOR NO KEY UPDATE`: two such statements never wait for each other in a cycle), then
    /// each given a new row version with the same values. A concurrent deletion waits for the transaction; a
    /// serializable one that began before it commits then fails, and runs again seeing what this transaction wrote.
    /// (A lock alone wouldn't make it fail: only an update does.)
    func touchingSQL(keys: Int) -> String {
        "WITH found AS (SELECT \(primaryKeyColumn) FROM \(table) WHERE \(primaryKeyColumn) IN ("
            + (1...keys).map { "$\($0)" }.joined(separator: ", ")
            + ") ORDER BY \(primaryKeyColumn) FOR NO KEY UPDATE) UPDATE \(table) SET \(primaryKeyColumn) = found."
            + "\(primaryKeyColumn) FROM found WHERE \(table).\(primaryKeyColumn) = found.\(primaryKeyColumn) RETURNING "
            + "\(table).\(primaryKeyColumn)"
    }

    /// `CREATE TABLE` and `CREATE INDEX` statements for a new store.
    var creationSQL: [String] { [tableSQL] + indexSQL(layout.entity.indexes) }

    /// `CREATE TABLE` for the entity's columns, without indexes.
    var tableSQL: String {
        "CREATE TABLE \(table) (\(TableDefinition.columns(of: layout.entity, columnType: Self.columnType)))"
    }

    /// `CREATE INDEX` statements for indexes of the entity, on this table.
    func indexSQL(_ indexes: [Index]) -> [String] {
        TableDefinition.indexes(indexes, of: layout.entity, on: table)
    }

    /// The column type of an attribute type, as `information_schema.columns.data_type` spells it.
    static func columnType(_ type: AttributeType) -> String {
        switch type.storageClass {
        case .integer: "bigint"
        case .real: "double precision"
        case .text, .blob: "bytea"
        }
    }

    /// Checks that every identifier the model makes fits PostgreSQL (at most 63 bytes, no NUL), so none is silently
    /// truncated into another.
    static func validateIdentifiers(of model: Model) throws {
        for layout in try model.layouts() {
            let entity = layout.entity
            let names =
                [entity.name] + entity.attributes.map(\.name) + entity.indexes.map { $0.name(in: entity.name) }
            for name in names where name.utf8.count > 63 || name.unicodeScalars.contains("\0") {
                throw PersistenceError(
                    .invalidSchema,
                    "'\(name.prefix(80))' (of entity '\(entity.name)') is longer than PostgreSQL's 63-byte identifiers"
                        + " or holds NUL: rename it for the PostgreSQL backend")
            }
        }
    }
}

extension EntityLookup<PostgresTable> {
    /// The tables of `model`'s entities in the PostgreSQL schema `schema`.
    static func tables(of model: Model, in schema: String) throws -> EntityLookup<PostgresTable> {
        try EntityLookup(
            model: model,
            storage: try model.layouts().enumerated().map {
                PostgresTable(index: $0.offset, layout: $0.element, schema: schema)
            })
    }
}

extension EntityLookup<PostgresTable> {
    /// The table of `type`.
    /// - Throws: `unknownEntity` when the type is not part of the model.
    @inline(__always)
    func table<E: Entity>(for type: E.Type) throws -> PostgresTable { all[try positions.position(of: type)] }
}
