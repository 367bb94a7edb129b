public import Foundation
import PersistenceCore
import RawSQLite

/// G1: delete one author whose posts and comments cascade — `descendants` records — in one write.
///
/// Raw is SQLite's own `FOREIGN KEY … ON DELETE CASCADE` (with `PRAGMA foreign_keys = ON` and an index on each
/// foreign key, as SQLite's documentation asks); ours is `db.delete(GraphAuthor.self, id: 1)` with the rules
/// declared on the entities. The LMDB rows make the same call on LMDB stores, for information.
public enum CascadeSubject: String, CaseIterable, Sendable {
    case raw = "raw"
    case ours = "ours"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"

    /// The workload id of the rows.
    public static let workload = "G1"

    /// Fills a store in `directory` (empty), reopens it, and times the delete alone; then checks that author 1's
    /// records are gone and author 2's are all there.
    public func run(_ input: CascadeInput, directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let remaining: (authors: Int, posts: Int, comments: Int)
        let seconds: Double
        switch self {
        case .raw:
            try RawCascadeStore(directory: directory).fill(input)
            let store = try RawCascadeStore(directory: directory)
            seconds = try Stopwatch.time { try store.deleteAuthor(1) }.seconds
            remaining = try store.counts()
        case .ours, .oursLMDBPlain, .oursLMDBEncrypted:
            let (opened, seconds_) = try timeOurs(input, directory)
            seconds = seconds_
            remaining = try opened.read { context in
                (
                    try context.count(GraphAuthor.self), try context.count(GraphPost.self),
                    try context.count(GraphComment.self)
                )
            }
        }
        try verify.expect(
            remaining == (1, input.survivingPosts, input.survivingComments),
            "after the delete: \(remaining), expected (1, \(input.survivingPosts), \(input.survivingComments))")
        return seconds
    }

    private func timeOurs(_ input: CascadeInput, _ directory: URL) throws -> (any Database, Double) {
        let filling = try open(directory)
        try fill(filling, input)
        try filling.close()
        let db = try open(directory)
        let seconds = try Stopwatch.time {
            let deleted = try db.delete(GraphAuthor.self, id: 1)
            try Verifier(workload: Self.workload, implementation: rawValue).expect(deleted, "author 1 was not there")
        }.seconds
        return (db, seconds)
    }

    private func fill(_ db: any Database, _ input: CascadeInput) throws {
        try db.write { context in
            try context.create(input.authors)
            try context.create(input.posts)
            try context.create(input.comments)
        }
    }

    static let entities: [any Entity.Type] = [GraphAuthor.self, GraphPost.self, GraphComment.self]

    private func open(_ directory: URL) throws -> any PersistenceCore.Database {
        let store: OursGraphStore =
            switch self {
            case .ours, .raw: .sqlite
            case .oursLMDBPlain: .lmdbPlain
            case .oursLMDBEncrypted: .lmdbEncrypted
            }
        return try store.open(directory, Self.entities)
    }
}

/// G1's raw baseline: the same three tables with SQLite's own cascading foreign keys, through the C API.
final class RawCascadeStore {
    private let connection: RawSQLiteConnection

    init(directory: URL) throws {
        connection = try RawSQLiteConnection(path: directory.appendingPathComponent("raw.sqlite").path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute("PRAGMA foreign_keys = ON")
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS post (id INTEGER PRIMARY KEY,
                authorID INTEGER NOT NULL REFERENCES author(id) ON DELETE CASCADE, title TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS post_author ON post(authorID);
            CREATE TABLE IF NOT EXISTS comment (id INTEGER PRIMARY KEY,
                postID INTEGER NOT NULL REFERENCES post(id) ON DELETE CASCADE, body TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS comment_post ON comment(postID);
            """)
    }

    func fill(_ input: CascadeInput) throws {
        try connection.execute("BEGIN IMMEDIATE")
        let author = try connection.prepare("INSERT INTO author (id, name) VALUES (?, ?)")
        for row in input.authors { try insert(author, row.id, parent: nil, row.name) }
        let post = try connection.prepare("INSERT INTO post (id, authorID, title) VALUES (?, ?, ?)")
        for row in input.posts { try insert(post, row.id, parent: row.authorID, row.title) }
        let comment = try connection.prepare("INSERT INTO comment (id, postID, body) VALUES (?, ?, ?)")
        for row in input.comments { try insert(comment, row.id, parent: row.postID, row.body) }
        try connection.execute("COMMIT")
    }

    private func insert(_ statement: OpaquePointer, _ id: Int64, parent: Int64?, _ text: String) throws {
        try connection.bind(id, at: 1, statement)
        if let parent { try connection.bind(parent, at: 2, statement) }
        try connection.bind(text, at: parent == nil ? 2 : 3, statement)
        _ = try connection.step(statement)
        sqlite3_reset(statement)
    }

    /// The timed operation: one transaction deleting the author, SQLite cascading.
    func deleteAuthor(_ id: Int64) throws {
        try connection.execute("BEGIN IMMEDIATE")
        try connection.execute("DELETE FROM author WHERE id = \(id)")
        try connection.execute("COMMIT")
    }

    func counts() throws -> (authors: Int, posts: Int, comments: Int) {
        (
            try connection.integer("SELECT count(*) FROM author") ?? -1,
            try connection.integer("SELECT count(*) FROM post") ?? -1,
            try connection.integer("SELECT count(*) FROM comment") ?? -1
        )
    }
}
