import RawSQLite

extension RawSQLiteConnection {
    /// The version-2 `Person` table (``MappedPerson``), written by hand: `score` an integer, no `email`, `karma`
    /// added; the columns in the order the library gives them.
    private static let mappedTable = """
        CREATE TABLE "Person_new" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, "age" INTEGER NOT NULL,
            "score" INTEGER NOT NULL, "bio" TEXT NOT NULL, "karma" INTEGER NOT NULL)
        """
    private static let mappedColumns = #""id", "name", "age", "score", "bio", "karma""#

    /// S8's raw migration of a version-1 store the library wrote: SQLite's documented table rebuild, hand-written,
    /// in one transaction — a new table, one `INSERT … SELECT` that does the transform in SQL
    /// (``MappedPerson/scoreInHundredthsSQL``), writes the added `karma` as a literal and leaves `email` out, then
    /// the old table dropped, the new one renamed, the `name` index built again and the metadata's model version
    /// set to 2.
    ///
    /// The copy of the rows is marked on `clock`.
    func rebuildPersonTable(clock: MigrationPhaseClock) throws {
        try execute("BEGIN IMMEDIATE")
        do {
            try execute(Self.mappedTable)
            clock.beginCopy()
            try execute(
                #"INSERT INTO "Person_new" (\#(Self.mappedColumns)) SELECT "id", "name", "age", "#
                    + #"\#(MappedPerson.scoreInHundredthsSQL), "bio", \#(MappedPerson.defaultKarma) FROM "Person""#)
            clock.endCopy()
            try execute(#"DROP TABLE "Person""#)
            try execute(#"ALTER TABLE "Person_new" RENAME TO "Person""#)
            try execute(#"CREATE INDEX "index_Person_name" ON "Person" ("name")"#)
            try execute(#"UPDATE "persistence_metadata" SET "value" = 2 WHERE "key" = 'modelVersion'"#)
            guard sqlite3_changes(handle) == 1 else {
                throw RawSQLiteError(
                    code: SQLITE_NOTFOUND, message: "the store has no model version in its metadata",
                    context: "update the model version")
            }
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Calls `body` with every record of a migrated store, read as ``MappedPerson``s; a `score` or `karma` not
    /// stored as an integer (a transform that left a real, say) fails the verification rather than being
    /// converted on the way out.
    func forEachMappedPerson(_ verify: Verifier, _ body: (MappedPerson) throws -> Void) throws {
        let sql = #"SELECT \#(Self.mappedColumns) FROM "Person""#
        var prepared: OpaquePointer?
        try RawSQLiteError.check(sqlite3_prepare_v2(handle, sql, -1, &prepared, nil), handle, sql)
        defer { sqlite3_finalize(prepared) }
        guard let statement = prepared else {
            throw RawSQLiteError(code: SQLITE_MISUSE, message: "empty SQL", context: sql)
        }
        while try step(statement) {
            let id = sqlite3_column_int64(statement, 0)
            for (column, name) in [(Int32(3), "score"), (5, "karma")] {
                let type = sqlite3_column_type(statement, column)
                try verify.expect(
                    type == SQLITE_INTEGER, "record \(id)'s \(name) is stored with type \(type), not as an integer")
            }
            try body(
                MappedPerson(
                    id: id, name: Self.text(statement, 1), age: Int(sqlite3_column_int64(statement, 2)),
                    score: Int(sqlite3_column_int64(statement, 3)), bio: Self.text(statement, 4),
                    karma: Int(sqlite3_column_int64(statement, 5))))
        }
    }

    /// Checks a migrated store's schema: no `email` column, the `name` index on the new table, no table left over,
    /// the metadata's model version 2, and `PRAGMA integrity_check` (which also checks every index entry against
    /// its row).
    func verifyMappedSchema(_ verify: Verifier) throws {
        let email = try integer(#"SELECT count(*) FROM pragma_table_info('Person') WHERE "name" = 'email'"#)
        try verify.expect(email == 0, "the migrated table still has an email column")
        let index = try integer(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'index_Person_name' "
                + "AND tbl_name = 'Person'")
        try verify.expect(index == 1, "the migrated table has no index_Person_name")
        let tables = try integer(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
                + "AND name NOT IN ('Person', 'persistence_metadata') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        try verify.expect(tables == 0, "\(tables ?? 0) tables are left over besides Person and the metadata")
        let version = try integer(#"SELECT "value" FROM "persistence_metadata" WHERE "key" = 'modelVersion'"#)
        try verify.expect(version == 2, "the metadata's model version is \(version.map(String.init) ?? "missing")")
        let integrity = try text("PRAGMA integrity_check")
        try verify.expect(integrity == "ok", "PRAGMA integrity_check: \(integrity ?? "no answer")")
    }

    /// The first column of the first row of a query, as text.
    private func text(_ sql: String) throws -> String? {
        var prepared: OpaquePointer?
        try RawSQLiteError.check(sqlite3_prepare_v2(handle, sql, -1, &prepared, nil), handle, sql)
        defer { sqlite3_finalize(prepared) }
        guard let statement = prepared, try step(statement) else { return nil }
        return Self.text(statement, 0)
    }
}
