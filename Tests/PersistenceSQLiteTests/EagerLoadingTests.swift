import Foundation
import Logging
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// Eager loading runs a fixed number of statements per relationship level, whatever the number of parents: counted
/// in the statements the database traces.
struct EagerLoadingTests {
    struct Author: Entity, Equatable {
        var id: Int64
        static let relationships: [Relationship] = [.toMany("posts", Post.self, inverse: "author")]
    }

    struct Post: Entity, Equatable {
        var id: Int64
        var authorID: Int64
        var rank: Int
        static let relationships: [Relationship] = [
            .toOne("author", Author.self, foreignKey: "authorID", onDelete: .cascade),
            .toMany("comments", Comment.self, inverse: "post"),
        ]
    }

    struct Comment: Entity, Equatable {
        var id: Int64
        var postID: Int64
        static let relationships: [Relationship] = [
            .toOne("post", Post.self, foreignKey: "postID", onDelete: .cascade)
        ]
    }

    @Test(arguments: [10, 1_000, 6_000])
    func oneStatementPerLevelPerBatch(authors: Int) throws {
        try withTemporaryDirectory { directory in
            let log = CapturedLog()
            var builder = SQLiteBuilder(databaseName: "Blog", entities: [Author.self, Post.self, Comment.self])
            builder.directory = directory
            builder.logger = log.logger(level: .trace)
            let db = try builder.create()
            try db.write { context in
                try context.create((1...authors).map { Author(id: Int64($0)) })
                for author in 1...authors {
                    for rank in 0..<4 {
                        let post = Int64(author * 4 + rank)
                        try context.create(Post(id: post, authorID: Int64(author), rank: rank))
                        try context.create(Comment(id: post, postID: post))
                    }
                }
            }
            let before = log.entries.count
            let loaded = try db.recover(
                Author.self,
                including: .many(
                    "posts", Post.self, sortedBy: [.descending("rank")], limit: 3,
                    including: .many("comments", Comment.self)))
            let selects = log.entries.dropFirst(before).filter { $0.contains("SELECT") }
            // Authors, then posts and comments in batches of at most 5,000 parents each.
            let batches = (authors + Including<Author, [Post]>.batchSize - 1) / Including<Author, [Post]>.batchSize
            let commentBatches =
                (authors * 3 + Including<Post, [Comment]>.batchSize - 1)
                / Including<Post, [Comment]>.batchSize
            #expect(selects.count == 1 + batches + commentBatches, "\(selects.count) statements")
            #expect(loaded.count == authors)
            #expect(
                loaded.allSatisfy {
                    $0.related.map(\.entity.rank) == [3, 2, 1] && $0.related.allSatisfy { $0.related.count == 1 }
                })
        }
    }
}
