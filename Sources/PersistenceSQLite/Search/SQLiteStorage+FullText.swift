internal import CSQLite
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// Full-text indexes as FTS5 tables, one per index: a column per indexed attribute holding its tokens (cut and folded
/// by the core, joined by spaces, read back by FTS5's `ascii` tokenizer as the same tokens). A record's FTS5 rowid is
/// its integer primary key; an entity keyed otherwise keeps its key in an unindexed column and a table mapping keys to
/// rowids. Each index's state is a row of `persistence_fulltext_state`.
extension SQLiteStorage {
    static let stateTable = "persistence_fulltext_state"

    /// The FTS5 table of an index, quoted.
    private func table(_ name: String) -> String { quote("persistence_" + name) }
    /// The key-to-rowid table of an index on an entity not keyed by integers, quoted.
    private func keysTable(_ name: String) -> String { quote("persistence_" + name + "_keys") }

    private func integerKeyed(_ entity: Int) -> Bool {
        let layout = mappings.all[entity].layout
        return layout.types[layout.primaryKeyIndex].storageClass == .integer
    }

    @_spi(PersistenceBackend) public var keepsFullTextIndexes: Bool { connection.hasFullText }

    private func hasStateTable() throws -> Bool {
        try connection.scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(Self.stateTable)])
            != nil
    }

    @_spi(PersistenceBackend) public func fullTextIndexState(_ index: FullTextIndexLayout, entity: Int) throws
        -> FullTextIndexState?
    {
        guard try hasStateTable(),
            case .blob(let data)? = try connection.scalar(
                "SELECT state FROM \(quote(Self.stateTable)) WHERE name = ?", [.text(index.name)])
        else { return nil }
        return try FullTextIndexState(encoded: data)
    }

    @_spi(PersistenceBackend) public func setFullTextIndexState(
        _ state: FullTextIndexState, index: FullTextIndexLayout, entity: Int, emptying: Bool
    ) throws {
        if emptying {
            try connection.execute(
                "CREATE TABLE IF NOT EXISTS \(quote(Self.stateTable)) (name TEXT NOT NULL PRIMARY KEY, state BLOB NOT NULL)"
            )
            try dropTables(of: index.name)
            let columns = index.positions.indices.map { "c\($0)" }.joined(separator: ", ")
            let integer = integerKeyed(entity)
            try connection.execute(
                "CREATE VIRTUAL TABLE \(table(index.name)) USING fts5(\(columns)\(integer ? "" : ", key UNINDEXED"), "
                    + "tokenize = 'ascii', prefix = '2 3')")
            if !integer {
                try connection.execute(
                    "CREATE TABLE \(keysTable(index.name)) (key NOT NULL PRIMARY KEY, docid INTEGER NOT NULL) "
                        + "WITHOUT ROWID")
            }
        }
        let statement = try connection.statement(
            sql: "INSERT OR REPLACE INTO \(quote(Self.stateTable)) (name, state) VALUES (?, ?)")
        defer { statement.reset() }
        try statement.bind(.text(index.name), at: 1)
        try statement.bind(.blob(state.encoded()), at: 2)
        _ = try statement.step()
    }

    @_spi(PersistenceBackend) public func storedFullTextIndexes() throws -> Set<String> {
        guard try hasStateTable() else { return [] }
        let statement = try connection.statement(sql: "SELECT name FROM \(quote(Self.stateTable))")
        defer { statement.reset() }
        var names = Set<String>()
        while try statement.step() {
            if case .text(let name) = statement.column(0) { names.insert(name) }
        }
        return names
    }

    @_spi(PersistenceBackend) public func dropFullTextIndex(named name: String) throws {
        try dropTables(of: name)
        guard try hasStateTable() else { return }
        let statement = try connection.statement(sql: "DELETE FROM \(quote(Self.stateTable)) WHERE name = ?")
        defer { statement.reset() }
        try statement.bind(.text(name), at: 1)
        _ = try statement.step()
    }

    private func dropTables(of name: String) throws {
        try connection.execute("DROP TABLE IF EXISTS \(table(name))")
        try connection.execute("DROP TABLE IF EXISTS \(keysTable(name))")
    }

    @_spi(PersistenceBackend) public func updateFullTextIndex(
        _ index: FullTextIndexLayout, entity: Int, removing keys: [Value], adding documents: [FullTextDocument]
    ) throws {
        let fts = table(index.name)
        let integer = integerKeyed(entity)
        if integer {
            let delete = try connection.statement(sql: "DELETE FROM \(fts) WHERE rowid = ?")
            for key in keys {
                defer { delete.reset() }
                try delete.bind(key, at: 1)
                _ = try delete.step()
            }
        } else {
            let keysTable = keysTable(index.name)
            let delete = try connection.statement(
                sql: "DELETE FROM \(fts) WHERE rowid = (SELECT docid FROM \(keysTable) WHERE key = ?)")
            let forget = try connection.statement(sql: "DELETE FROM \(keysTable) WHERE key = ?")
            for key in keys {
                for statement in [delete, forget] {
                    defer { statement.reset() }
                    try statement.bind(key, at: 1)
                    _ = try statement.step()
                }
            }
        }
        guard !documents.isEmpty else { return }
        let columns = index.positions.indices.map { "c\($0)" }
        let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
        let insert = try connection.statement(
            sql: integer
                ? "INSERT INTO \(fts) (rowid, \(columns.joined(separator: ", "))) VALUES (\(placeholders))"
                : "INSERT INTO \(fts) (\(columns.joined(separator: ", ")), key) VALUES (\(placeholders))")
        let map =
            integer
            ? nil : try connection.statement(sql: "INSERT INTO \(keysTable(index.name)) (key, docid) VALUES (?, ?)")
        for document in documents {
            do {
                defer { insert.reset() }
                var parameter: Int32 = 1
                if integer {
                    try insert.bind(document.key, at: parameter)
                    parameter += 1
                }
                for column in document.columns {
                    try insert.bind(.text(column.joined(separator: " ")), at: parameter)
                    parameter += 1
                }
                if !integer { try insert.bind(document.key, at: parameter) }
                _ = try insert.step()
            }
            if let map {
                defer { map.reset() }
                try map.bind(document.key, at: 1)
                try map.bind(.integer(sqlite3_last_insert_rowid(connection.handle)), at: 2)
                _ = try map.step()
            }
        }
    }

    @_spi(PersistenceBackend) public func fullTextMatches(
        _ plan: FullTextPlan, index: FullTextIndexLayout, entity: Int
    ) throws -> FullTextMatches {
        let fts = table(index.name)
        let key = integerKeyed(entity) ? "rowid" : "key"
        let sql = "SELECT \(key), \(FullTextCounts.name)(\(fts)) FROM \(fts) WHERE \(fts) MATCH ?"
        instrumentation.trace(sql, entity: mappings.all[entity].layout.entity.name)
        let statement = try connection.statement(sql: sql)
        defer { statement.reset() }
        try statement.bind(.text(Self.matchExpression(plan)), at: 1)
        let phrases = plan.phrases.count
        var matches = FullTextMatches(
            documentCount: 0, totalLength: 0, documentFrequencies: Array(repeating: 0, count: phrases), documents: [])
        var counts: [Int64] = []
        var first = true
        while try statement.step() {
            statement.integers(at: 1, into: &counts)
            guard counts.count == 3 + 2 * phrases else {
                throw PersistenceError(.backend, "FTS5 gave counts of an unexpected shape")
            }
            if first {
                matches.documentCount = Int(counts[0])
                matches.totalLength = Int(counts[1])
                for phrase in 0..<phrases { matches.documentFrequencies[phrase] = Int(counts[2 + phrase]) }
                first = false
            }
            let row = 2 + phrases
            matches.documents.append(
                FullTextMatches.Document(
                    key: statement.column(0), length: Int(counts[row]),
                    frequencies: (0..<phrases).map { Int(counts[row + 1 + $0]) }))
        }
        return matches
    }

    /// The FTS5 query of a plan: each phrase quoted (its tokens hold no quote, nor anything FTS5 reads as syntax),
    /// `*` after a prefix, all joined by `AND`.
    static func matchExpression(_ plan: FullTextPlan) -> String {
        plan.phrases.map { phrase in
            "\"" + phrase.tokens.joined(separator: " ").replacingOccurrences(of: "\"", with: "\"\"") + "\""
                + (phrase.isPrefix ? " *" : "")
        }.joined(separator: " AND ")
    }
}
