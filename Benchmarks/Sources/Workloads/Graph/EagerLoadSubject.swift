public import Foundation
import GRDB
import PersistenceCore
import RawSQLite

/// E1's data: `authors` authors with `postsPerAuthor` posts each, dates from a fixed seed; and what loading each
/// author with their `limit` latest posts must give.
public struct EagerLoadInput: Sendable {
    public let authors: [BlogAuthor]
    public let posts: [BlogPost]
    public let limit: Int
    /// Each author (by id order) with their latest posts, newest first (then by id).
    public let expected: [[Int64]]

    public init(authors count: Int, postsPerAuthor: Int, limit: Int) {
        var generator = SplitMix64(seed: 0xE1)
        authors = (1...Swift.max(1, count)).map { BlogAuthor(id: Int64($0), name: "author \($0)") }
        var posts: [BlogPost] = []
        for author in authors {
            for _ in 0..<postsPerAuthor {
                let id = Int64(posts.count + 1)
                posts.append(
                    BlogPost(
                        id: id, authorID: author.id, title: "post \(id)",
                        published: Date(timeIntervalSinceReferenceDate: Double(generator.next(below: 1_000_000)))))
            }
        }
        self.posts = posts
        self.limit = limit
        let byAuthor = Dictionary(grouping: posts, by: \.authorID)
        expected = authors.map { author in
            (byAuthor[author.id] ?? []).sorted { ($0.published, $1.id) > ($1.published, $0.id) }.prefix(limit).map(\.id)
        }
    }
}

/// E1: load every author with their 3 latest posts, decoded into structs.
///
/// Raw is one `LEFT JOIN` of the authors with a window query over the posts (`ROW_NUMBER() OVER (PARTITION BY
/// authorID ORDER BY published DESC, id)`), through the C API, building the same `(author, [post])` values. Ours is
/// `recover(_:including: .many("posts", …, limit: 3))`: two queries. GRDB is `including(all:)` — which can't limit
/// per author, so it loads all the posts and keeps 3 in Swift. LMDB makes ours' call, for information.
public enum EagerLoadSubject: String, CaseIterable, Sendable {
    case raw = "raw"
    case ours = "ours"
    case grdb = "grdb"
    case oursLMDBPlain = "ours-lmdb-plain"

    /// The workload id of the rows.
    public static let workload = "E1"

    /// Fills a store in `directory`, reopens it, times the load, and checks every author's posts.
    public func run(_ input: EagerLoadInput, directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let (loaded, seconds): ([(BlogAuthor, [BlogPost])], Double)
        switch self {
        case .raw:
            try RawBlogStore(directory: directory).fill(input)
            let store = try RawBlogStore(directory: directory)
            (loaded, seconds) = try Stopwatch.time { try store.load(limit: input.limit) }
        case .grdb:
            try GRDBBlogStore(directory: directory).fill(input)
            let store = try GRDBBlogStore(directory: directory)
            (loaded, seconds) = try Stopwatch.time { try store.load(limit: input.limit) }
        case .ours, .oursLMDBPlain:
            let filling = try open(directory)
            try filling.write { context in
                try context.create(input.authors)
                try context.create(input.posts)
            }
            try filling.close()
            let db = try open(directory)
            (loaded, seconds) = try Stopwatch.time {
                try db.recover(
                    BlogAuthor.self,
                    including: .many("posts", BlogPost.self, sortedBy: [.descending("published")], limit: input.limit)
                ).map { ($0.entity, $0.related) }
            }
            try db.close()
        }
        try verify.expect(loaded.map(\.0) == input.authors, "the authors differ")
        try verify.expect(loaded.map { $0.1.map(\.id) } == input.expected, "an author's latest posts differ")
        return seconds
    }

    private func open(_ directory: URL) throws -> any PersistenceCore.Database {
        let store: OursGraphStore =
            switch self {
            case .ours, .raw, .grdb: .sqlite
            case .oursLMDBPlain: .lmdbPlain
            }
        return try store.open(directory, [BlogAuthor.self, BlogPost.self])
    }
}

/// E1's raw baseline: the tables ours makes (posts indexed by author), loaded by one join through the C API.
final class RawBlogStore {
    private let connection: RawSQLiteConnection

    init(directory: URL) throws {
        connection = try RawSQLiteConnection.durable(
            "raw.sqlite", in: directory,
            schema: """
                CREATE TABLE IF NOT EXISTS author (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS post (id INTEGER PRIMARY KEY, authorID INTEGER NOT NULL, title TEXT NOT NULL,
                    published REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS post_author ON post(authorID);
                """)
    }

    func fill(_ input: EagerLoadInput) throws {
        try connection.execute("BEGIN IMMEDIATE")
        let author = try connection.prepare("INSERT INTO author (id, name) VALUES (?, ?)")
        for row in input.authors {
            try connection.bind(row.id, at: 1, author)
            try connection.bind(row.name, at: 2, author)
            _ = try connection.step(author)
            sqlite3_reset(author)
        }
        let post = try connection.prepare("INSERT INTO post (id, authorID, title, published) VALUES (?, ?, ?, ?)")
        for row in input.posts {
            try connection.bind(row.id, at: 1, post)
            try connection.bind(row.authorID, at: 2, post)
            try connection.bind(row.title, at: 3, post)
            try connection.bind(row.published.timeIntervalSinceReferenceDate, at: 4, post)
            _ = try connection.step(post)
            sqlite3_reset(post)
        }
        try connection.execute("COMMIT")
    }

    /// The timed operation: one read, one statement.
    func load(limit: Int) throws -> [(BlogAuthor, [BlogPost])] {
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let statement = try connection.prepare(
            """
            SELECT a.id, a.name, p.id, p.title, p.published FROM author AS a LEFT JOIN (
                SELECT id, authorID, title, published,
                    ROW_NUMBER() OVER (PARTITION BY authorID ORDER BY published DESC, id) AS rank FROM post
            ) AS p ON p.authorID = a.id AND p.rank <= ?
            ORDER BY a.id, p.published DESC, p.id
            """)
        try connection.bind(Int64(limit), at: 1, statement)
        var loaded: [(BlogAuthor, [BlogPost])] = []
        while try connection.step(statement) {
            let authorID = sqlite3_column_int64(statement, 0)
            if loaded.last?.0.id != authorID {
                loaded.append((BlogAuthor(id: authorID, name: RawSQLiteConnection.text(statement, 1)), []))
            }
            guard sqlite3_column_type(statement, 2) != SQLITE_NULL else { continue }
            loaded[loaded.count - 1].1.append(
                BlogPost(
                    id: sqlite3_column_int64(statement, 2), authorID: authorID,
                    title: RawSQLiteConnection.text(statement, 3),
                    published: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 4))))
        }
        sqlite3_reset(statement)
        return loaded
    }
}

/// E1 in GRDB 7, idiomatically: records with a `hasMany` association, `including(all:)` decoded into a struct of
/// the author and its posts.
final class GRDBBlogStore {
    struct Author: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "author"
        static let posts = hasMany(Post.self)
        var id: Int64
        var name: String
    }

    struct Post: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "post"
        static let author = belongsTo(Author.self)
        var id: Int64
        var authorID: Int64
        var title: String
        var published: Date
    }

    struct AuthorInfo: Decodable, FetchableRecord {
        var author: Author
        var posts: [Post]
    }

    private let pool: DatabasePool

    init(directory: URL) throws {
        pool = try DatabasePool(path: directory.appendingPathComponent("grdb.sqlite").path)
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try pool.write { db in
            try db.create(table: "author", ifNotExists: true) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
            }
            try db.create(table: "post", ifNotExists: true) { table in
                table.primaryKey("id", .integer)
                table.belongsTo("author").notNull()
                table.column("title", .text).notNull()
                table.column("published", .datetime).notNull()
            }
        }
    }

    func fill(_ input: EagerLoadInput) throws {
        try pool.write { db in
            for author in input.authors { try Author(id: author.id, name: author.name).insert(db) }
            for post in input.posts {
                try Post(id: post.id, authorID: post.authorID, title: post.title, published: post.published).insert(db)
            }
        }
    }

    /// The timed operation: `including(all:)` can't limit per author, so every post comes and 3 are kept.
    func load(limit: Int) throws -> [(BlogAuthor, [BlogPost])] {
        let infos = try pool.read { db in
            try Author.including(all: Author.posts.order(Column("published").desc, Column("id")))
                .order(Column("id")).asRequest(of: AuthorInfo.self).fetchAll(db)
        }
        return infos.map { info in
            (
                BlogAuthor(id: info.author.id, name: info.author.name),
                info.posts.prefix(limit).map {
                    BlogPost(id: $0.id, authorID: $0.authorID, title: $0.title, published: $0.published)
                }
            )
        }
    }
}
