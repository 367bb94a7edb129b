import PostgresNIO

/// Checks that the raw baseline's table has the shape ours creates — the same columns with the same types and
/// nullability, the same indexes — so the P rows compare the same work.
public enum PostgresTableShape {
    /// Creates ours' store and raw's table afresh, compares them on the server, and leaves both empty.
    /// - Throws: ``VerificationError`` naming the first difference; the implementations' errors.
    public static func verify(on server: PostgresServer) throws {
        _ = try OursPostgresSubject(server: server, fresh: true)
        _ = try RawPostgresSubject(server: server, fresh: true)
        let (ours, raw) = try blockingWait {
            let connection = try await server.connect()
            do {
                let shapes = (
                    try await describe(PostgresServer.oursSchema, on: connection),
                    try await describe(PostgresServer.rawSchema, on: connection)
                )
                try await connection.close()
                return shapes
            } catch {
                try? await connection.close()
                throw error
            }
        }
        let verify = Verifier(workload: "P1–P7", implementation: RawPostgresSubject.implementation)
        try verify.expect(!ours.isEmpty, "no table \"Person\" in \(PostgresServer.oursSchema)")
        for (oursLine, rawLine) in zip(ours, raw) {
            try verify.expect(
                oursLine == rawLine, "the table differs from ours': \(rawLine) where ours has \(oursLine)")
        }
        try verify.expect(ours.count == raw.count, "the table has \(raw.count) columns and indexes, ours \(ours.count)")
    }

    /// One line per column (name, type, nullability) and per index (its definition without the schema).
    private static func describe(_ schema: String, on connection: PostgresConnection) async throws -> [String] {
        var lines: [String] = []
        let columns = try await connection.query(
            """
            SELECT column_name::text, data_type::text, is_nullable::text FROM information_schema.columns \
            WHERE table_schema = \(schema) AND table_name = 'Person' ORDER BY ordinal_position
            """, logger: PostgresServer.logger)
        for try await (name, type, nullable) in columns.decode((String, String, String).self) {
            lines.append("column \(name) \(type)" + (nullable == "NO" ? " NOT NULL" : ""))
        }
        let indexes = try await connection.query(
            """
            SELECT replace(indexdef, \(schema) || '.', '') FROM pg_indexes \
            WHERE schemaname = \(schema) AND tablename = 'Person' ORDER BY indexname
            """, logger: PostgresServer.logger)
        for try await definition in indexes.decode(String.self) { lines.append(definition) }
        return lines
    }
}
