import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// Full-text indexes as `tsvector` columns under GIN indexes, one table per index (`persistence_ft_<digest of the
/// index's name>`: the record's key, its length, its tokens with their positions). The core cuts and folds the text —
/// PostgreSQL's parsers and dictionaries never see it, so its rules are the other backends' — and the GIN index finds
/// the records holding a token (or a prefix, `:*`); phrases and relevance are counted from the positions, in the core.
///
/// A `tsvector` keeps at most 255 positions of one token, none past 16,383: a record whose indexed text goes beyond is
/// refused (``PersistenceError/Code/unsupported``) rather than indexed differently from the other backends.
extension PostgresStorage {
    /// The most positions one token may have in one record, and the last position, that a `tsvector` keeps exactly.
    static let maximumTokenPositions = 255
    static let maximumPosition = 16_383

    private var stateTable: String { quote(schema) + "." + quote("persistence_fulltext_state") }

    /// The table of the index named `name`, quoted and qualified.
    private func fullTextTable(_ name: String) -> String { quote(schema) + "." + quote(Self.fullTextTableName(name)) }

    /// The name of the table of the index named `name`: `persistence_ft_` and 16 hex digits of an FNV-1a digest of
    /// it (PostgreSQL names are at most 63 bytes; index names aren't).
    static func fullTextTableName(_ name: String) -> String { digestName("persistence_ft_", name) }

    /// `prefix` and 16 hex digits of an FNV-1a digest of `name`: a table name of the library's that fits PostgreSQL's
    /// 63 bytes whatever the length of what it is named after.
    static func digestName(_ prefix: String, _ name: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digest = String(hash, radix: 16)
        return prefix + String(repeating: "0", count: 16 - digest.count) + digest
    }

    @_spi(PersistenceBackend) public var keepsFullTextIndexes: Bool { true }

    private func hasStateTable() throws -> Bool {
        let rows = try run("SELECT to_regclass($1) IS NOT NULL", [.text(stateTable)], textAsBytes: false).rows
        return try rows.first?.values().first == .integer(1)
    }

    @_spi(PersistenceBackend) public func fullTextIndexState(_ index: FullTextIndexLayout, entity: Int) throws
        -> FullTextIndexState?
    {
        guard try hasStateTable() else { return nil }
        let rows = try run("SELECT state FROM \(stateTable) WHERE name = $1", [.text(index.name)]).rows
        guard let row = rows.first, case .blob(let data) = try row.values().first ?? .null else { return nil }
        return try FullTextIndexState(encoded: data)
    }

    @_spi(PersistenceBackend) public func setFullTextIndexState(
        _ state: FullTextIndexState, index: FullTextIndexLayout, entity: Int, emptying: Bool
    ) throws {
        if emptying {
            try run("CREATE TABLE IF NOT EXISTS \(stateTable) (name bytea PRIMARY KEY, state bytea NOT NULL)")
            let table = fullTextTable(index.name)
            let layout = tables.all[entity].layout
            let keyType = PostgresTable.columnType(layout.types[layout.primaryKeyIndex])
            try run("DROP TABLE IF EXISTS \(table)")
            try run(
                "CREATE TABLE \(table) (key \(keyType) NOT NULL PRIMARY KEY, length integer NOT NULL, "
                    + "tokens tsvector NOT NULL)")
            try run("CREATE INDEX ON \(table) USING gin (tokens)")
        }
        try run(
            "INSERT INTO \(stateTable) (name, state) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET state = $2",
            [.text(index.name), .blob(state.encoded())])
    }

    @_spi(PersistenceBackend) public func storedFullTextIndexes() throws -> Set<String> {
        guard try hasStateTable() else { return [] }
        var names = Set<String>()
        for row in try run("SELECT name FROM \(stateTable)").rows {
            if case .blob(let name) = try row.values().first ?? .null {
                names.insert(String(decoding: name, as: UTF8.self))
            }
        }
        return names
    }

    @_spi(PersistenceBackend) public func dropFullTextIndex(named name: String) throws {
        try run("DROP TABLE IF EXISTS \(fullTextTable(name))")
        guard try hasStateTable() else { return }
        try run("DELETE FROM \(stateTable) WHERE name = $1", [.text(name)])
    }

    @_spi(PersistenceBackend) public func updateFullTextIndex(
        _ index: FullTextIndexLayout, entity: Int, removing keys: [Value], adding documents: [FullTextDocument]
    ) throws {
        let table = fullTextTable(index.name)
        let entityName = tables.all[entity].layout.entity.name
        var start = 0
        while start < keys.count {
            let end = min(start + 500, keys.count)
            let placeholders = (1...(end - start)).map { "$\($0)" }.joined(separator: ", ")
            try run("DELETE FROM \(table) WHERE key IN (\(placeholders))", Array(keys[start..<end]), entity: entityName)
            start = end
        }
        start = 0
        while start < documents.count {
            let end = min(start + 500, documents.count)
            var values: [Value] = []
            var rows: [String] = []
            for document in documents[start..<end] {
                let base = values.count
                values += [document.key, .integer(Int64(document.length)), .text(try Self.tsvector(of: document))]
                rows.append("($\(base + 1), $\(base + 2), convert_from($\(base + 3), 'UTF8')::tsvector)")
            }
            try run(
                "INSERT INTO \(table) (key, length, tokens) VALUES \(rows.joined(separator: ", "))", values,
                entity: entityName)
            start = end
        }
    }

    /// A record's tokens as a `tsvector` literal: each token quoted (a token holds no quote or backslash) with its
    /// positions from 1.
    /// - Throws: ``PersistenceError/Code/unsupported`` past what a `tsvector` keeps.
    static func tsvector(of document: FullTextDocument) throws -> String {
        var literal = ""
        for (term, positions) in document.termPositions() {
            guard positions.count <= maximumTokenPositions, let last = positions.last, last + 1 <= maximumPosition
            else {
                throw PersistenceError(
                    .unsupported,
                    "a record's indexed text is too long for a full-text index on PostgreSQL, whose tsvector keeps at "
                        + "most \(maximumTokenPositions) occurrences of a word and \(maximumPosition) words: declare "
                        + "stop words for the most frequent words, or index shorter text")
            }
            if !literal.isEmpty { literal += " " }
            literal += "'" + term + "':" + positions.map { String($0 + 1) }.joined(separator: ",")
        }
        return literal
    }

    @_spi(PersistenceBackend) public func fullTextMatches(
        _ plan: FullTextPlan, index: FullTextIndexLayout, entity: Int
    ) throws -> FullTextMatches {
        let table = fullTextTable(index.name)
        let layout = tables.all[entity].layout
        let keyClass = layout.types[layout.primaryKeyIndex].storageClass
        let entityName = layout.entity.name
        let totals = try run("SELECT count(*), coalesce(sum(length), 0) FROM \(table)", entity: entityName).rows
        guard let row = totals.first, case .integer(let documents) = try row.values()[0],
            case .integer(let tokens) = try row.values()[1]
        else { throw PersistenceError(.backend, "PostgreSQL gave no counts of a full-text index") }
        return try FullTextMatching.matches(plan, statistics: (Int(documents), Int(tokens))) { token, prefix, visit in
            let query = "'" + token + "'" + (prefix ? ":*" : "")
            // A token's positions in a row: the row's vector with that token's weight set and every other token
            // filtered out, read as text (`'token':3A,17A`) — in C, where unnesting the vector cost a row per token.
            // A prefix names no token ahead: its rows' tokens are unnested and those it begins kept.
            let sql =
                prefix
                ? "SELECT t.key, t.length, array_to_string(u.positions, ',') FROM \(table) t, unnest(t.tokens) u "
                    + "WHERE t.tokens @@ convert_from($1, 'UTF8')::tsquery "
                    + "AND starts_with(u.lexeme, convert_from($2, 'UTF8'))"
                : "SELECT t.key, t.length, ts_filter(setweight(t.tokens, 'A', ARRAY[convert_from($2, 'UTF8')]), "
                    + "'{a}')::text FROM \(table) t WHERE t.tokens @@ convert_from($1, 'UTF8')::tsquery"
            var values: [Value] = []
            for row in try run(sql, [.text(query), .text(token)], entity: entityName).rows {
                try row.read(as: [keyClass, .integer, .text], into: &values)
                guard case .integer(let length) = values[1], case .text(let text) = values[2] else {
                    throw PersistenceError(.corrupt, "a full-text index's row is damaged")
                }
                let list = prefix ? Substring(text) : text.split(separator: ":", maxSplits: 1).last ?? ""
                let positions = list.split(separator: ",").compactMap { Int($0.filter(\.isNumber)).map { $0 - 1 } }
                try visit(
                    FullTextPosting(
                        key: values[0], length: Int(length), frequency: positions.count, positions: { positions }))
            }
        }
    }
}
