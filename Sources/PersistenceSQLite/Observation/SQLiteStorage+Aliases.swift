@_spi(PersistenceBackend) public import PersistenceCore
import PersistenceSQL

/// Aliases in the table `persistence_aliases`, one row per alias name and position: position -1 holds the entity
/// and whether the alias is a list, positions 0… the primary keys in order (stored as the key column stores them).
/// The table is created by the first alias set, so stores that never use aliases keep their layout.
extension SQLiteStorage {
    static let aliasTable = "persistence_aliases"

    @_spi(PersistenceBackend) public func aliasTarget(named name: String) throws -> AliasTarget? {
        guard try Self.hasAliasTable(connection) else { return nil }
        let statement = try connection.statement(
            sql: "SELECT position, entity, list, key FROM \(quote(Self.aliasTable)) WHERE name = ? ORDER BY position")
        defer { statement.reset() }
        try statement.bind([.text(name)])
        var target: AliasTarget?
        while try statement.step() {
            if case .integer(-1) = statement.column(0) {
                guard case .text(let entity) = statement.column(1), case .integer(let list) = statement.column(2)
                else { throw PersistenceError(.corrupt, "the stored alias '\(name)' is damaged") }
                target = AliasTarget(entity: entity, keys: [], isList: list != 0)
            } else {
                guard target != nil else { throw PersistenceError(.corrupt, "the stored alias '\(name)' is damaged") }
                target?.keys.append(statement.column(3))
            }
        }
        return target
    }

    @_spi(PersistenceBackend) public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS \(quote(Self.aliasTable)) (name TEXT NOT NULL, position INTEGER NOT NULL, "
                + "entity TEXT NOT NULL, list INTEGER NOT NULL, key, PRIMARY KEY (name, position)) WITHOUT ROWID")
        _ = try connection.scalar("DELETE FROM \(quote(Self.aliasTable)) WHERE name = ?", [.text(name)])
        if let target {
            let insert = try connection.statement(
                sql: "INSERT INTO \(quote(Self.aliasTable)) (name, position, entity, list, key) VALUES (?, ?, ?, ?, ?)")
            defer { insert.reset() }
            let list = Value.integer(target.isList ? 1 : 0)
            let header: [Value] = [.text(name), .integer(-1), .text(target.entity), list, .null]
            try insert.bind(header)
            try insert.run()
            for (position, key) in target.keys.enumerated() {
                try insert.bind([.text(name), .integer(Int64(position)), .text(target.entity), list, key])
                try insert.run()
            }
        }
    }

    private static func hasAliasTable(_ connection: Connection) throws -> Bool {
        try connection.scalar(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(aliasTable)])
            != .integer(0)
    }
}
