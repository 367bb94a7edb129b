import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// How one entity maps to one table: its layout and the SQL of its fixed statements, built once per database.
///
/// Identifiers come only from the schema and are always quoted; values are always bound by index.
final class TableMapping: Sendable {
    /// The fixed statements every entity has.
    enum Operation: Int, Hashable, CaseIterable {
        case insert, update, selectByID, selectStamp, deleteByID
    }

    /// The entity's position in the model; part of statement cache keys.
    let index: Int
    let layout: RecordLayout
    let table: String
    /// The quoted column list, in layout order.
    let columns: String
    let primaryKeyColumn: String

    /// - Parameter table: The table's name when it isn't the entity's (a migration's new table).
    init(index: Int, layout: RecordLayout, table: String? = nil) {
        self.index = index
        self.layout = layout
        self.table = quote(table ?? layout.entity.name)
        columns = layout.names.map(quote).joined(separator: ", ")
        primaryKeyColumn = quote(layout.entity.primaryKey)
    }

    /// The SQL of a fixed statement.
    func sql(_ operation: Operation) -> String {
        let placeholders = Array(repeating: "?", count: layout.names.count).joined(separator: ", ")
        switch operation {
        case .insert:
            return "INSERT INTO \(table) (\(columns)) VALUES (\(placeholders))"
        case .update:
            // Every column, key included, so the bound values are the record's in layout order plus the key.
            let sets = layout.names.map { "\(quote($0)) = ?" }.joined(separator: ", ")
            return "UPDATE \(table) SET \(sets) WHERE \(primaryKeyColumn) = ?"
        case .selectByID:
            return "SELECT \(columns) FROM \(table) WHERE \(primaryKeyColumn) = ?"
        case .selectStamp:
            // One column whether or not the entity has a stamp: a row says the record exists.
            let stamp = layout.stampIndex.map { quote(layout.names[$0]) } ?? "1"
            return "SELECT \(stamp) FROM \(table) WHERE \(primaryKeyColumn) = ?"
        case .deleteByID:
            return "DELETE FROM \(table) WHERE \(primaryKeyColumn) = ?"
        }
    }

    /// `CREATE TABLE` and `CREATE INDEX` statements for a new store.
    var creationSQL: [String] {
        [Self.tableSQL(layout.entity, table: table)] + Self.indexSQL(layout.entity.indexes, of: layout.entity)
    }

    /// `CREATE TABLE` for an entity, under its own name or another (quoted) one.
    static func tableSQL(_ entity: EntityDescription, table: String) -> String {
        // An integer key (`INTEGER … PRIMARY KEY`) is the rowid: the fastest lookups SQLite has; other keys go
        // without one.
        let integerKey = entity.primaryKeyAttribute?.type.storageClass == .integer
        let options = integerKey ? "" : " WITHOUT ROWID"
        return "CREATE TABLE \(table) (\(TableDefinition.columns(of: entity, columnType: Self.columnType)))\(options)"
    }

    /// `CREATE INDEX` statements for indexes of an entity, on the entity's table.
    static func indexSQL(_ indexes: [Index], of entity: EntityDescription) -> [String] {
        TableDefinition.indexes(indexes, of: entity, on: quote(entity.name))
    }

    static func columnType(_ type: AttributeType) -> String {
        switch type.storageClass {
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}

extension EntityLookup<TableMapping> {
    /// The table mapping of `type`.
    /// - Throws: `unknownEntity` when the type is not part of the model.
    @inline(__always)
    func mapping<E: Entity>(for type: E.Type) throws -> TableMapping { all[try positions.position(of: type)] }
}
