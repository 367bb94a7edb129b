import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceTesting
import Testing

/// The migration suite on PostgreSQL: a store is a schema on the test server, named for the check's directory and
/// the store's name.
extension PostgresConformance: MigrationConformanceBackend {
    func builder(
        named name: String, model: Model, plan: MigrationPlan?, progress: MigrationProgressHandler?,
        in directory: URL
    ) throws -> PostgresBuilder {
        var builder = try PostgresBuilder(url: serverURL(), model: model)
        builder.schema = Self.prefix(directory) + name
        builder.migrationPlan = plan
        builder.migrationProgress = progress
        return builder
    }

    func dryRunMigration(_ builder: PostgresBuilder) throws -> MigrationReport? { try builder.dryRunMigration() }

    func migrationReport(of store: PostgresDatabase) -> MigrationReport? { store.migrationReport }

    func tableNames(of store: PostgresDatabase) throws -> [String] {
        try Self.names(
            store, "SELECT table_name::text FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1",
            store.schema)
    }

    func indexNames(of store: PostgresDatabase) throws -> [String] {
        try Self.names(
            store,
            """
            SELECT c.relname::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT i.indisprimary ORDER BY 1
            """, store.schema)
    }

    private static func names(_ store: PostgresDatabase, _ sql: String, _ schema: String) throws -> [String] {
        try store.read { try $0.rows(sql, [.text(schema)]) }.compactMap {
            if case .text(let name) = $0[0] { name } else { nil }
        }
    }

    /// The schema's columns, indexes and every row as text, read through a database of its own schema.
    func fingerprint(named name: String, in directory: URL) throws -> Data {
        let schema = Self.prefix(directory) + name
        let reader = try builder(
            named: "persistence_fingerprint", model: Model(version: 1, entities: [Probe.self]), plan: nil,
            progress: nil, in: URL(fileURLWithPath: "/")
        )
        .create()
        defer { try? reader.close() }
        let lines = try reader.read { context in
            var lines: [String] = []
            let columns = try context.rows(
                """
                SELECT table_name::text, column_name::text, data_type::text, is_nullable::text,
                coalesce(column_default, '')::text FROM information_schema.columns WHERE table_schema = $1
                ORDER BY table_name, ordinal_position
                """, [.text(schema)])
            let indexes = try context.rows(
                "SELECT indexname::text, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 1", [.text(schema)])
            lines += (columns + indexes).map { row in row.values.map { "\($0)" }.joined(separator: " ") }
            for table in Set(
                columns.compactMap { row -> String? in
                    if case .text(let table) = row[0] { table } else { nil }
                }
            ).sorted() {
                let rows = try context.rows(
                    "SELECT t::text FROM \(Self.quoted(schema)).\(Self.quoted(table)) t ORDER BY 1")
                lines += rows.map { "\(table): \($0[0])" }
            }
            return lines
        }
        return Data(lines.joined(separator: "\n").utf8)
    }

    private static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.checks)
func migrationConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: PostgresConformance())
}

@Test(.timeLimit(.minutes(30)), arguments: MigrationConformanceSuite.blockChecks)
func migrationBlockConformance(_ check: MigrationConformanceCheck) async throws {
    try await check.run(on: PostgresConformance())
}
