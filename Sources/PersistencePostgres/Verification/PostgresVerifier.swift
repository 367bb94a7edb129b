import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// Checks one PostgreSQL store in one `REPEATABLE READ` snapshot: the metadata, each entity's table (columns, types,
/// nullability, primary key) and indexes, then every row's values against its attribute.
///
/// Rows stream through a cursor, a batch at a time, so memory stays flat. The server's own storage checks (page
/// checksums, `amcheck`) are the server administrator's: they need superuser rights and an extension.
struct PostgresVerifier {
    let connection: ServerConnection
    let schema: String
    let tables: [PostgresTable]
    /// Runs one statement (the context's `run`, which traces and marks its transaction failed on an error).
    private let query: (_ sql: String, _ values: [Value], _ textAsBytes: Bool) throws -> PostgresQueryResult
    /// Adds the dangling references and the full-text indexes' problems to the report.
    private let verifyReferencesAndFullTextIndexes: (inout VerificationReport) throws -> Void
    private var report = VerificationReport()

    /// Checks the store of `context`'s database.
    init(context: PostgresContext) {
        connection = context.storage.connection
        schema = context.storage.schema
        tables = context.storage.tables.all
        query = { try context.storage.run($0, $1, textAsBytes: $2) }
        verifyReferencesAndFullTextIndexes = { try context.verifyReferencesAndFullTextIndexes(into: &$0) }
    }

    /// Checks a store through its stored schema's tables, on a connection in a read transaction.
    init(
        connection: ServerConnection, schema: String, tables: [PostgresTable],
        verifyReferencesAndFullTextIndexes: @escaping (inout VerificationReport) throws -> Void
    ) {
        self.connection = connection
        self.schema = schema
        self.tables = tables
        query = { try connection.run($0, $1, textAsBytes: $2) }
        self.verifyReferencesAndFullTextIndexes = verifyReferencesAndFullTextIndexes
    }

    mutating func run() throws -> VerificationReport {
        try verifyMetadata()
        for table in tables {
            report.entitiesChecked += 1
            let present = try verifyColumns(of: table)
            try verifyIndexes(of: table)
            try verifyRows(of: table, present: present)
        }
        try verifyReferencesAndFullTextIndexes(&report)
        return report
    }

    private mutating func add(_ problem: VerificationProblem) { report.append(problem) }

    /// Runs a catalog query; values by their PostgreSQL types.
    private func catalog(_ sql: String, _ arguments: [Value]) throws -> [[Value]] {
        try query(sql, arguments, false).rows.map { try $0.values() }
    }

    // MARK: - Metadata

    private mutating func verifyMetadata() throws {
        let table = PostgresSchemaStore.metadataTable
        guard
            try !catalog(
                "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2",
                [.text(schema), .text(table)]
            ).isEmpty
        else {
            add(VerificationProblem(.metadataMissing, message: "the metadata table '\(table)' is missing"))
            return
        }
        let stored = try PostgresSchemaStore.readMetadata(connection, schema: schema)
        for problem in VerificationProblem.metadataProblems(
            stored, formatVersion: PostgresSchemaStore.formatVersion, current: tables.map(\.layout.entity))
        {
            add(problem)
        }
    }

    // MARK: - Tables and indexes

    /// Checks the entity's table against its description; returns the attribute positions that have a column.
    private mutating func verifyColumns(of table: PostgresTable) throws -> [Int] {
        let entity = table.layout.entity
        let keyColumns = try catalog(
            "SELECT a.attname::text FROM pg_catalog.pg_index i "
                + "JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                + "WHERE i.indrelid = to_regclass($1) AND i.indisprimary", [.text(table.table)]
        ).compactMap { row -> String? in if case .text(let name) = row[0] { name } else { nil } }
        var columns: [String: CatalogColumn] = [:]
        for row in try catalog(
            "SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns "
                + "WHERE table_schema = $1 AND table_name = $2", [.text(schema), .text(entity.name)])
        {
            guard case .text(let name) = row[0], case .text(let type) = row[1], case .text(let nullable) = row[2]
            else { continue }
            columns[name] = CatalogColumn(type: type, notNull: nullable == "NO", isKey: keyColumns.contains(name))
        }
        let (problems, present) = VerificationProblem.tableProblems(
            columns, of: entity, columnType: PostgresTable.columnType)
        for problem in problems { add(problem) }
        return present
    }

    private mutating func verifyIndexes(of table: PostgresTable) throws {
        var found: [String: CatalogIndex] = [:]
        for row in try catalog(
            "SELECT c.relname::text, i.indisunique, "
                + "array_to_string(ARRAY(SELECT a.attname::text FROM unnest(i.indkey) WITH ORDINALITY AS k(n, o) "
                + "JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o), "
                + "chr(31)) FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid "
                + "WHERE i.indrelid = $1::regclass AND NOT i.indisprimary", [.text(table.table)])
        {
            guard case .text(let name) = row[0], case .integer(let unique) = row[1], case .text(let list) = row[2]
            else { continue }
            found[name] = CatalogIndex(isUnique: unique != 0, columns: list.split(separator: "\u{1F}").map(String.init))
        }
        for problem in VerificationProblem.indexProblems(found, of: table.layout.entity) { add(problem) }
    }

    // MARK: - Rows

    /// Checks each value of each row against its attribute, naming the row by its primary key. Text is read as
    /// bytes first, so text that isn't UTF-8 is reported rather than read with replacement characters.
    private mutating func verifyRows(of table: PostgresTable, present: [Int]) throws {
        let layout = table.layout
        guard !present.isEmpty else { return }
        let attributes = present.map { layout.entity.attributes[$0] }
        let classes = present.map { layout.types[$0].storageClass == .text ? .blob : layout.types[$0].storageClass }
        let keyColumn = present.firstIndex(of: layout.primaryKeyIndex)
        let keyType = layout.types[layout.primaryKeyIndex]
        let sql = "SELECT \(attributes.map { quote($0.name) }.joined(separator: ", ")) FROM \(table.table)"
        _ = try query("DECLARE persistence_verify NO SCROLL CURSOR FOR \(sql)", [], true)
        var values: [Value] = []
        while true {
            let rows = try query("FETCH \(PostgresStorage.fetchSize) FROM persistence_verify", [], true).rows
            for row in rows {
                // An async verify() whose task is cancelled stops between rows.
                try CancellationFlag.checkCurrent()
                report.recordsChecked += 1
                try row.read(as: classes, into: &values)
                for index in values.indices where attributes[index].type.storageClass == .text {
                    guard case .blob(let bytes) = values[index] else { continue }
                    values[index] = String(validating: bytes, as: UTF8.self).map(Value.text) ?? .blob(bytes)
                }
                let key = keyColumn.map { values[$0].primaryKeyText(as: keyType) }
                for (position, value) in zip(present, values) {
                    guard let found = layout.verificationProblem(for: value, at: position) else { continue }
                    add(
                        VerificationProblem(
                            found.kind, entity: layout.entity.name, primaryKey: key,
                            attribute: layout.names[position], message: found.message))
                }
            }
            if rows.count < PostgresStorage.fetchSize { break }
        }
        _ = try query("CLOSE persistence_verify", [], true)
    }
}

extension PostgresDatabase {
    /// Checks the whole store in one read snapshot and reports every problem it finds (see `Database/verify()`).
    public func verify() throws -> VerificationReport {
        try read { context in
            var verifier = PostgresVerifier(context: context)
            return try verifier.run()
        }
    }

    /// Checks the whole store, as the synchronous `verify()` does, off the cooperative pool.
    public func verify() async throws -> VerificationReport {
        try await runner.read { try self.verify() }
    }
}
