import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// A migration block's scratch storage on SQLite: one temporary table per entity, `persistence_block_<entity>`, in the
/// migration's transaction (rolled back with it), with columns of no declared type — SQLite keeps a value in one
/// exactly as given, whatever the entity's types — and the stored tables read a page at a time in primary-key order.
final class SQLiteMigrationScratch: MigrationScratch {
    let connection: Connection
    /// Each prepared entity's table and its number of new and old value columns.
    private var tables: [String: (table: String, new: Int, old: Int)] = [:]
    /// Each prepared entity's insert statements, replacing and not: their SQL, made once.
    private var insertSQL: [String: (replacing: String, keeping: String)] = [:]
    /// Statements prepared for this run only, by SQL.
    private var statements: [String: Statement] = [:]

    init(connection: Connection) {
        self.connection = connection
    }

    private func statement(_ sql: String) throws -> Statement {
        if let statement = statements[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(db: connection.handle, sql: sql, persistent: false)
        statements[sql] = statement
        return statement
    }

    // MARK: - The stored records

    private static func columns(_ layout: RecordLayout) -> String { layout.names.map(quote).joined(separator: ", ") }

    func sourceRecords(_ layout: RecordLayout, after: Value?, limit: Int) throws -> [Record] {
        let key = quote(layout.entity.primaryKey)
        let statement = try statement(
            "SELECT \(Self.columns(layout)) FROM \(quote(layout.entity.name))"
                + (after == nil ? "" : " WHERE \(key) > ?") + " ORDER BY \(key) LIMIT \(limit)")
        defer { statement.reset() }
        if let after { try statement.bind(after, at: 1) }
        var records: [Record] = []
        while try statement.step() { records.append(try Record(layout: layout, values: statement.row())) }
        return records
    }

    func sourceRecord(_ layout: RecordLayout, key: Value) throws -> Record? {
        let statement = try statement(
            "SELECT \(Self.columns(layout)) FROM \(quote(layout.entity.name)) "
                + "WHERE \(quote(layout.entity.primaryKey)) = ?")
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return try Record(layout: layout, values: statement.row())
    }

    func sourceCount(_ layout: RecordLayout) throws -> Int {
        guard case .integer(let count)? = try connection.scalar("SELECT count(*) FROM \(quote(layout.entity.name))")
        else { return 0 }
        return Int(count)
    }

    // MARK: - Scratch records

    private func table(_ entity: String) throws -> (table: String, new: Int, old: Int) {
        guard let table = tables[entity] else {
            throw PersistenceError(.backend, "the migration has no scratch table for '\(entity)'")
        }
        return table
    }

    func prepare(_ entity: String, keyType: AttributeType, newCount: Int, oldCount: Int) throws {
        let table = "temp." + quote("persistence_block_" + entity)
        let columns = (0..<newCount).map { ", n\($0)" } + (0..<oldCount).map { ", o\($0)" }
        try connection.execute("DROP TABLE IF EXISTS \(table)")
        try connection.execute("CREATE TABLE \(table) (k PRIMARY KEY, created INTEGER NOT NULL\(columns.joined()))")
        tables[entity] = (table, newCount, oldCount)
        let placeholders = Array(repeating: ", ?", count: newCount + oldCount).joined()
        insertSQL[entity] = (
            "INSERT OR REPLACE INTO \(table) VALUES (?, ?\(placeholders))",
            "INSERT OR IGNORE INTO \(table) VALUES (?, ?\(placeholders))"
        )
    }

    func put(_ entity: String, key: Value, new: [Value], old: [Value]?, replacing: Bool) throws -> Bool {
        let (_, newCount, oldCount) = try table(entity)
        guard let sql = insertSQL[entity] else {
            throw PersistenceError(.backend, "the migration has no scratch table for '\(entity)'")
        }
        let statement = try statement(replacing ? sql.replacing : sql.keeping)
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        try statement.bind(.integer(old == nil ? 1 : 0), at: 2)
        for (offset, value) in new.prefix(newCount).enumerated() { try statement.bind(value, at: Int32(offset + 3)) }
        // Every old column is bound: a statement keeps its bindings from one record to the next.
        for offset in 0..<oldCount {
            try statement.bind(old.map { $0[offset] } ?? .null, at: Int32(newCount + offset + 3))
        }
        try statement.run()
        return connection.changes > 0
    }

    func records(_ entity: String, after: Value?, limit: Int) throws -> [MigrationScratchRecord] {
        let (table, newCount, oldCount) = try table(entity)
        let statement = try statement(
            "SELECT * FROM \(table)" + (after == nil ? "" : " WHERE k > ?") + " ORDER BY k LIMIT \(limit)")
        defer { statement.reset() }
        if let after { try statement.bind(after, at: 1) }
        var records: [MigrationScratchRecord] = []
        while try statement.step() {
            let row = statement.row()
            records.append(
                MigrationScratchRecord(
                    key: row[0], new: Array(row[2..<(2 + newCount)]),
                    old: row[1] == .integer(1) ? nil : Array(row[(2 + newCount)..<(2 + newCount + oldCount)])))
        }
        return records
    }

    func delete(_ entity: String, key: Value) throws -> Bool {
        let statement = try statement("DELETE FROM \(try table(entity).table) WHERE k = ?")
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        try statement.run()
        return connection.changes > 0
    }

    func count(_ entity: String) throws -> Int {
        guard case .integer(let count)? = try connection.scalar("SELECT count(*) FROM \(try table(entity).table)")
        else { return 0 }
        return Int(count)
    }

    func clear(_ entity: String) throws {
        try connection.execute("DELETE FROM \(try table(entity).table)")
    }

    func drop() throws {
        statements.removeAll()
        for (_, table) in tables { try connection.execute("DROP TABLE IF EXISTS \(table.table)") }
        tables.removeAll()
        insertSQL.removeAll()
    }
}
