import RawSQLite

/// A version-2 `Person` table written by hand, for raw SQLite's table rebuild: its `CREATE TABLE` (named
/// `Person_new`), its columns in the order the library gives them, and what each is selected as from a version-1 row.
struct RebuiltPersonTable {
    var definition: String
    var columns: String
    var selection: String
    /// The version-1 column the migration leaves out or renames: gone from the rebuilt table.
    var goneColumn: String
}

extension RawSQLiteConnection {
    /// The raw migration of a version-1 store the library wrote: SQLite's documented table rebuild, hand-written,
    /// in one transaction — a new table, one `INSERT … SELECT` that makes the change in SQL (S8: the transform as
    /// ``MappedPerson/scoreInHundredthsSQL``, `email` left out; M2: `bio` selected into `about`; both: the added
    /// `karma` as a literal), then the old table dropped, the new one renamed, the `name` index built again and
    /// the metadata's model version set to 2.
    ///
    /// `beginCopy` and `endCopy` are called around the copy of the rows.
    func rebuildPersonTable(
        _ table: RebuiltPersonTable, beginCopy: () -> Void = {}, endCopy: () -> Void = {}
    ) throws {
        try execute("BEGIN IMMEDIATE")
        do {
            try execute(table.definition)
            beginCopy()
            try execute(#"INSERT INTO "Person_new" (\#(table.columns)) SELECT \#(table.selection) FROM "Person""#)
            endCopy()
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

    /// Calls `body` with every record of a migrated store, read as `Record`s (each column's storage class checked
    /// by ``MigratedRecord/read(_:_:)``).
    func forEachMigrated<Record: MigratedRecord>(
        _ type: Record.Type, _ verify: Verifier, _ body: (Record) throws -> Void
    ) throws {
        let sql = #"SELECT \#(Record.rebuiltTable.columns) FROM "Person""#
        var prepared: OpaquePointer?
        try RawSQLiteError.check(sqlite3_prepare_v2(handle, sql, -1, &prepared, nil), handle, sql)
        defer { sqlite3_finalize(prepared) }
        guard let statement = prepared else {
            throw RawSQLiteError(code: SQLITE_MISUSE, message: "empty SQL", context: sql)
        }
        while try step(statement) { try body(Record.read(statement, verify)) }
    }

    /// Checks that the integer columns `names` (index, name) of the row `statement` stands on are stored as
    /// integers: a transform that left a real, say, fails the verification rather than being converted on the
    /// way out.
    static func expectIntegers(_ statement: OpaquePointer, _ columns: [(Int32, String)], _ verify: Verifier) throws {
        for (column, name) in columns {
            let type = sqlite3_column_type(statement, column)
            try verify.expect(
                type == SQLITE_INTEGER,
                "record \(sqlite3_column_int64(statement, 0))'s \(name) is stored with type \(type), not as an integer")
        }
    }

    /// Checks a migrated store's schema: no `goneColumn` (S8: `email`, M2: `bio`), the `name` index on the new
    /// table, no table left over, the metadata's model version 2, and `PRAGMA integrity_check` (which also checks
    /// every index entry against its row).
    func verifyMigratedSchema(_ table: RebuiltPersonTable, _ verify: Verifier) throws {
        let gone = try integer(
            #"SELECT count(*) FROM pragma_table_info('Person') WHERE "name" = '\#(table.goneColumn)'"#)
        try verify.expect(gone == 0, "the migrated table still has a \(table.goneColumn) column")
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
