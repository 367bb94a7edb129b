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

    /// A record of a chain: each refers to the one before, and goes when it does.
    struct Step: Entity, Equatable {
        var id: Int64
        var previousID: Int64?
        static let relationships: [Relationship] = [
            .toOne("previous", Step.self, foreignKey: "previousID", onDelete: .cascade),
            .toMany("next", Step.self, inverse: "previous"),
        ]
    }

    /// A cascade down a chain finds the whole chain in one recursive statement, not one lookup per level: the
    /// statements a delete runs don't grow with the chain's depth.
    @Test func aCascadeDownAChainLooksItUpInOneStatementWhateverItsDepth() throws {
        func selects(depth: Int) throws -> [String] {
            try withTemporaryDirectory { directory in
                let log = CapturedLog()
                var builder = SQLiteBuilder(databaseName: "Chain", entities: [Step.self])
                builder.directory = directory
                builder.logger = log.logger(level: .trace)
                let db = try builder.create()
                try db.create((1...depth).map { Step(id: Int64($0), previousID: $0 == 1 ? nil : Int64($0 - 1)) })
                let before = log.entries.count
                let report = try db.deleteReporting(Step.self, where: Field("id") == 1)
                let selects = log.entries.dropFirst(before).filter { $0.contains("SELECT") }
                #expect(report.deleted == ["Step": depth])
                #expect(try db.count(Step.self) == 0)
                return selects
            }
        }
        let shallow = try selects(depth: 10)
        let deep = try selects(depth: 1_200)
        // The records the condition names, then the chain below them.
        #expect(shallow.count == 2 && deep.count == 2, "\(shallow.count) and \(deep.count) statements")
        #expect(deep.filter { $0.contains("WITH RECURSIVE") }.count == 1)
    }
}
