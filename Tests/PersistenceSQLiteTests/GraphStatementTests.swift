import Foundation
import Logging
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// What SQL the graph features run, counted and read in the statements the database traces: a condition on related
/// records is one statement (a correlated subquery), a many-to-many level two, a projection selects only its
/// columns.
struct GraphStatementTests {
    struct Author: Entity, Equatable {
        var id: Int64
        var biography: String
        static let relationships: [Relationship] = [.toMany("posts", Post.self, inverse: "author")]
    }

    struct Post: Entity, Equatable {
        var id: Int64
        var authorID: Int64
        var draft: Bool
        static let relationships: [Relationship] = [
            .toOne("author", Author.self, foreignKey: "authorID", onDelete: .cascade),
            .manyToMany("tags", Tag.self, inverse: "posts"),
        ]
    }

    struct Tag: Entity, Equatable {
        var id: String
        static let relationships: [Relationship] = [.manyToMany("posts", Post.self, inverse: "tags")]
    }

    struct AuthorRow: Decodable, Equatable {
        var id: Int64
    }

    /// Runs `body` on a database of 50 authors with 4 posts each, every post tagged twice; returns the statements
    /// `body` ran.
    func statements(_ body: (SQLiteDatabase) throws -> Void) throws -> [String] {
        try withTemporaryDirectory { directory in
            let log = CapturedLog()
            var builder = SQLiteBuilder(databaseName: "Blog", entities: [Author.self, Post.self, Tag.self])
            builder.directory = directory
            builder.logger = log.logger(level: .trace)
            let db = try builder.create()
            try db.write { context in
                try context.create(
                    (1...50).map { Author(id: Int64($0), biography: String(repeating: "b", count: 500)) })
                try context.create(["a", "b", "c"].map { Tag(id: $0) })
                for post in 1...200 {
                    let created = Post(id: Int64(post), authorID: Int64(post % 50 + 1), draft: post % 3 == 0)
                    try context.create(created)
                    try context.link(created, "tags", Tag(id: ["a", "b", "c"][post % 3]))
                    try context.link(created, "tags", Tag(id: ["a", "b", "c"][(post + 1) % 3]))
                }
            }
            let before = log.entries.count
            try body(db)
            return log.entries.dropFirst(before).filter { $0.contains("SELECT") }
        }
    }

    @Test func aRelatedConditionIsOneStatement() throws {
        let selects = try statements { db in
            let authors = try db.recover(
                Author.self, where: Related("posts").count(where: Field("draft") == false) >= 3)
            #expect(!authors.isEmpty)
            #expect(try db.count(Post.self, where: Related("tags").contains(where: Field("id") == "a")) > 0)
        }
        #expect(selects.count == 2, "\(selects)")
        #expect(selects.first?.contains("(SELECT count(*) FROM \"Post\" AS persistence_r1") == true, "\(selects)")
        #expect(selects.last?.contains("EXISTS (SELECT 1 FROM \"Post_Tag\"") == true, "\(selects)")
    }

    @Test func aManyToManyLevelIsTwoStatements() throws {
        let selects = try statements { db in
            let posts = try db.recover(Post.self, including: .many("tags", Tag.self, limit: 1))
            #expect(posts.count == 200 && posts.allSatisfy { $0.related.count == 1 })
        }
        #expect(selects.count == 3, "\(selects)")
    }

    @Test func aProjectionSelectsOnlyItsColumns() throws {
        let selects = try statements { db in
            let rows = try db.recover(AuthorRow.self, from: Author.self, limit: 2)
            #expect(rows == [AuthorRow(id: 1), AuthorRow(id: 2)])
        }
        #expect(selects.count == 1 && selects[0].contains("SELECT \"id\" FROM \"Author\""), "\(selects)")
    }
}
