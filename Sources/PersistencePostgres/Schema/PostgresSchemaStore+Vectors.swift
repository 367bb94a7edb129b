import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQL
import PostgresNIO

/// The vector attributes' tables of elements (``PostgresVectorTable``), kept by opening: derived from the stored
/// vectors, so a migration drops them before its steps (they refer to the tables it may replace) and the opening
/// builds them again from what it left — declaring, dropping or changing a vector attribute needs no code.
extension PostgresSchemaStore {
    /// The tables of elements the store holds, by name, with their dimensions.
    static let vectorStateTable = "persistence_vector_tables"

    /// Drops every table of elements of the store, in the opening's transaction (a migration's first step).
    static func dropVectorTables(_ connection: ServerConnection, schema: String) throws {
        guard try tableExists(connection, schema: schema, name: vectorStateTable) else { return }
        for case .text(let name)? in try connection.rows("SELECT name FROM \(qualified(schema, vectorStateTable))")
            .map(\.first)
        {
            try connection.execute("DROP TABLE IF EXISTS \(qualified(schema, name))")
        }
        try connection.execute("DELETE FROM \(qualified(schema, vectorStateTable))")
    }

    /// Builds the tables of elements `tables` declare and the store lacks, from the stored vectors, and drops those
    /// no longer declared, in the opening's transaction: one read of the list when all are there.
    static func ensureVectorTables(_ connection: ServerConnection, schema: String, tables: [PostgresTable]) throws {
        let declared = tables.flatMap { table in table.vectorTables.map { (table, $0) } }
        let state = qualified(schema, vectorStateTable)
        if try !tableExists(connection, schema: schema, name: vectorStateTable) {
            guard !declared.isEmpty else { return }
            try connection.execute(
                "CREATE TABLE \(state) (name text NOT NULL PRIMARY KEY, dimensions integer NOT NULL, "
                    + "stale boolean NOT NULL DEFAULT false)")
        }
        // A stale table (raw SQL changed records since it was built) is filled again in place: emptied, not dropped,
        // so that other connections' statements prepared on it stay valid and its constraints untouched.
        var stored: [String: (dimensions: Int64, stale: Bool)] = [:]
        for row in try connection.rows("SELECT name, dimensions, stale::integer FROM \(state)") {
            guard row.count == 3, case .text(let name) = row[0], case .integer(let dimensions) = row[1] else {
                continue
            }
            stored[name] = (dimensions, row[2] != .integer(0))
        }
        let wanted = Dictionary(declared.map { ($0.1.tableName, Int64($0.1.dimensions)) }) { first, _ in first }
        for name in stored.keys.sorted() where wanted[name] == nil {
            try connection.execute("DROP TABLE IF EXISTS \(qualified(schema, name))")
            try connection.run("DELETE FROM \(state) WHERE name = $1", [.text(name)], textAsBytes: false)
        }
        for (table, vectors) in declared {
            let found = stored[vectors.tableName]
            if let found, found.dimensions == Int64(vectors.dimensions), !found.stale { continue }
            let inPlace =
                try found?.dimensions == Int64(vectors.dimensions)
                && tableExists(connection, schema: schema, name: vectors.tableName)
            try buildVectorTable(vectors, of: table, inPlace: inPlace, connection)
            try connection.run(
                "INSERT INTO \(state) (name, dimensions) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET "
                    + "dimensions = excluded.dimensions, stale = false",
                [.text(vectors.tableName), .integer(Int64(vectors.dimensions))], textAsBytes: false)
        }
    }

    /// Creates `vectors`' table (or empties it, `inPlace`) and fills it from the stored values of `table`, 500 records
    /// a fetch.
    private static func buildVectorTable(
        _ vectors: PostgresVectorTable, of table: PostgresTable, inPlace: Bool, _ connection: ServerConnection
    ) throws {
        if inPlace {
            try connection.execute("TRUNCATE \(vectors.table)")
        } else {
            try connection.execute("DROP TABLE IF EXISTS \(vectors.table)")
            try connection.execute(vectors.creationSQL(entityTable: table))
        }
        let column = quote(table.layout.names[vectors.attribute])
        let classes = [table.classes[table.layout.primaryKeyIndex], StorageClass.blob]
        try connection.execute(
            "DECLARE persistence_vectors NO SCROLL CURSOR FOR SELECT \(table.primaryKeyColumn), \(column) FROM "
                + "\(table.table) WHERE \(column) IS NOT NULL")
        var values: [Value] = []
        while true {
            let rows = try connection.run(
                "FETCH \(PostgresVectorTable.rowsPerStatement) FROM persistence_vectors"
            ).rows
            var records: [(key: Value, value: Value)] = []
            for row in rows {
                try row.read(as: classes, into: &values)
                records.append((values[0], values[1]))
            }
            try PostgresStorage.writeVectors(records, into: vectors) { sql, data in
                try connection.runPrepared(sql, data: data)
            }
            if rows.count < PostgresVectorTable.rowsPerStatement { break }
        }
        try connection.execute("CLOSE persistence_vectors")
    }
}
