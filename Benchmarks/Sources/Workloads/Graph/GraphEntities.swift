public import Foundation
public import PersistenceCore

/// G1's graph: authors with posts with comments, each to-one cascading, as an app with a "delete account" would
/// declare it.
public struct GraphAuthor: Entity {
    public var id: Int64
    public var name: String
    public static let entityName = "Author"
    public static let relationships: [Relationship] = [.toMany("posts", GraphPost.self, inverse: "author")]
}

public struct GraphPost: Entity {
    public var id: Int64
    public var authorID: Int64
    public var title: String
    public static let entityName = "Post"
    public static let relationships: [Relationship] = [
        .toOne("author", GraphAuthor.self, foreignKey: "authorID", onDelete: .cascade),
        .toMany("comments", GraphComment.self, inverse: "post"),
    ]
}

public struct GraphComment: Entity {
    public var id: Int64
    public var postID: Int64
    public var body: String
    public static let entityName = "Comment"
    public static let relationships: [Relationship] = [
        .toOne("post", GraphPost.self, foreignKey: "postID", onDelete: .cascade)
    ]
}

/// A1's records: sales by 100 customers.
public struct Sale: Entity {
    public var id: Int64
    public var customer: Int64
    public var amount: Int64
    public var price: Double
}

/// E1's authors and posts: each author's latest posts, loaded with their authors.
public struct BlogAuthor: Entity, Equatable {
    public var id: Int64
    public var name: String
    public static let entityName = "BlogAuthor"
    public static let relationships: [Relationship] = [.toMany("posts", BlogPost.self, inverse: "author")]
}

public struct BlogPost: Entity, Equatable {
    public var id: Int64
    public var authorID: Int64
    public var title: String
    public var published: Date
    public static let entityName = "BlogPost"
    public static let relationships: [Relationship] = [
        .toOne("author", BlogAuthor.self, foreignKey: "authorID", onDelete: .cascade)
    ]
}
