public import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import RawSQLite

/// F1: full-text search over ``SearchCorpus``'s documents — FTS5 through the SQLite C API (the same table any app
/// would make: `fts5(title, body)`, its `bm25` rank), and ours on SQLite, plain and encrypted LMDB and PostgreSQL.
public enum FullTextSubject: String, CaseIterable, Sendable {
    case raw = "raw-fts5"
    case ours = "ours-sqlite"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"
    case oursPostgres = "ours-postgres"

    public static let workload = "F1"
    /// How many records each query returns.
    public static let limit = 10

    /// Opens an empty store of the subject in `directory` (PostgreSQL: in a schema of `server`'s, emptied first).
    public func open(in directory: URL, server: PostgresServer?) throws -> any FullTextSearching {
        switch self {
        case .raw: try RawFullTextStore(directory: directory)
        case .ours:
            try OursFullTextStore(
                {
                    var builder = SQLiteBuilder(databaseName: "ours", entities: [SearchDocument.self])
                    builder.directory = directory
                    return try builder.create()
                }, file: directory.appendingPathComponent("ours.sqlite"))
        case .oursLMDBPlain, .oursLMDBEncrypted:
            try OursFullTextStore(
                {
                    var builder =
                        self == .oursLMDBEncrypted
                        ? LMDBBuilder(
                            databaseName: "ours", passphrase: "benchmark passphrase", entities: [SearchDocument.self])
                        : LMDBBuilder.unencrypted(databaseName: "ours", entities: [SearchDocument.self])
                    builder.directory = directory
                    builder.initialMapSize = RawLMDBEnvironment.mapSize
                    return try builder.create()
                }, file: directory.appendingPathComponent("ours.lmdb"))
        case .oursPostgres:
            try OursFullTextStore(
                {
                    guard let server else {
                        throw VerificationError(
                            workload: Self.workload, implementation: rawValue, message: "no PostgreSQL server")
                    }
                    var builder = try PostgresBuilder(url: server.url, model: Model(entities: [SearchDocument.self]))
                    builder.schema = "bench_search"
                    _ = try? builder.deleteStore()
                    return try builder.create()
                }, file: nil)
        }
    }
}

/// What F1 does with a store.
public protocol FullTextSearching: AnyObject {
    /// Stores and indexes the documents, in one transaction.
    func build(_ documents: [SearchDocument]) throws
    /// The ids of the `limit` most relevant documents for `query`, each read whole.
    func search(_ query: String, limit: Int) throws -> [Int64]
    /// The store's size on disk, in bytes, once built.
    func size() throws -> Int
}

/// FTS5 through the C API: one table holding the text and its index; a query ranks with `bm25` and reads each
/// found row's title and body.
final class RawFullTextStore: FullTextSearching {
    let connection: RawSQLiteConnection
    let file: URL

    init(directory: URL) throws {
        file = directory.appendingPathComponent("raw.sqlite")
        connection = try RawSQLiteConnection.durable(
            "raw.sqlite", in: directory, schema: "CREATE VIRTUAL TABLE docs USING fts5(title, body)")
    }

    func build(_ documents: [SearchDocument]) throws {
        try connection.execute("BEGIN")
        let insert = try connection.prepare("INSERT INTO docs (rowid, title, body) VALUES (?, ?, ?)")
        for document in documents {
            try connection.bind(document.id, at: 1, insert)
            try connection.bind(document.title, at: 2, insert)
            try connection.bind(document.body, at: 3, insert)
            _ = try connection.step(insert)
            sqlite3_reset(insert)
        }
        try connection.execute("COMMIT")
    }

    func search(_ query: String, limit: Int) throws -> [Int64] {
        let find = try connection.prepare("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?")
        defer { sqlite3_reset(find) }
        try connection.bind(query, at: 1, find)
        try connection.bind(Int64(limit), at: 2, find)
        var ids: [Int64] = []
        while try connection.step(find) { ids.append(sqlite3_column_int64(find, 0)) }
        let read = try connection.prepare("SELECT title, body FROM docs WHERE rowid = ?")
        var characters = 0
        for id in ids {
            defer { sqlite3_reset(read) }
            try connection.bind(id, at: 1, read)
            guard try connection.step(read) else { continue }
            characters += String(cString: sqlite3_column_text(read, 0)).count
            characters += String(cString: sqlite3_column_text(read, 1)).count
        }
        return characters >= 0 ? ids : []
    }

    func size() throws -> Int { fileSize(file) }
}

/// Ours: `create` of every document in one write, and a `Query` with a full-text search and a limit.
final class OursFullTextStore<D: Database>: FullTextSearching {
    let database: D
    let file: URL?

    init(_ open: () throws -> D, file: URL?) throws {
        database = try open()
        self.file = file
    }

    func build(_ documents: [SearchDocument]) throws { try database.create(documents) }

    func search(_ query: String, limit: Int) throws -> [Int64] {
        try database.recover(SearchDocument.self, query: Query(search: .matching(query), limit: limit)).map(\.id)
    }

    func size() throws -> Int { try storeSize(database, file: file, schema: "bench_search") }
}

/// A store's size on disk, in bytes: its file's (with the write-ahead log's), or on PostgreSQL its schema's
/// relations'.
func storeSize(_ database: some Database, file: URL?, schema: String) throws -> Int {
    if let file { return fileSize(file) }
    guard let postgres = database as? PostgresDatabase else { return 0 }
    let total = try postgres.read { context in
        try context.scalar(
            "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n "
                + "ON n.oid = c.relnamespace WHERE n.nspname = '\(schema)' AND c.relkind IN ('r', 't')")
    }
    if case .integer(let bytes)? = total { return Int(bytes) }
    return 0
}

/// A store file's size with its write-ahead log's, in bytes.
func fileSize(_ file: URL) -> Int {
    [file.path, file.path + "-wal"].reduce(0) { total, path in
        total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
    }
}

extension FullTextSubject {
    /// Stores and indexes `documents` in `store`; the seconds it took.
    public func build(_ store: any FullTextSearching, _ documents: [SearchDocument]) throws -> Double {
        try Stopwatch.time { try store.build(documents) }.seconds
    }

    /// Answers every query once; the seconds it took.
    public func answer(_ queries: [String], on store: any FullTextSearching) throws -> Double {
        try Stopwatch.time {
            for query in queries { _ = try store.search(query, limit: Self.limit) }
        }.seconds
    }

    /// Each query's answer, checked: something is found, and every implementation of ours answers as `ours` did
    /// (the same records in the same order); `nil` when `ours` is `nil` and this is the first of ours.
    /// - Throws: ``VerificationError`` when an answer differs.
    public func verifiedAnswers(_ queries: [String], on store: any FullTextSearching, matching ours: [[Int64]]?)
        throws -> [[Int64]]
    {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let found = try queries.map { try store.search($0, limit: Self.limit) }
        try verify.expect(found.contains { !$0.isEmpty }, "no query found anything")
        if self != .raw, let ours {
            try verify.expect(found == ours, "ours answered differently on this backend: \(found) against \(ours)")
        }
        return found
    }
}
