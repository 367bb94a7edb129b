package import PersistenceCore

/// The parts of `CREATE TABLE` and `CREATE INDEX` every SQL backend writes the same way; each backend names its
/// column types and the table.
package enum TableDefinition {
    /// One column definition per attribute: its quoted name, its type (`columnType`), `NOT NULL PRIMARY KEY` for the
    /// primary key and `NOT NULL` for every other non-optional attribute.
    package static func columns(of entity: EntityDescription, columnType: (AttributeType) -> String) -> String {
        entity.attributes.map { attribute in
            var definition = "\(quote(attribute.name)) \(columnType(attribute.type))"
            if attribute.name == entity.primaryKey {
                definition += " NOT NULL PRIMARY KEY"
            } else if !attribute.isOptional {
                definition += " NOT NULL"
            }
            return definition
        }.joined(separator: ", ")
    }

    /// `CREATE [UNIQUE] INDEX` for each index of `entity`, on `table` (quoted, and qualified where the backend needs).
    package static func indexes(_ indexes: [Index], of entity: EntityDescription, on table: String) -> [String] {
        indexes.map { index in
            let unique = index.isUnique ? "UNIQUE " : ""
            let columns = index.attributes.map(quote).joined(separator: ", ")
            return "CREATE \(unique)INDEX \(quote(index.name(in: entity.name))) ON \(table) (\(columns))"
        }
    }
}
