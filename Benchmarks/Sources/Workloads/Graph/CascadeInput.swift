/// G1's data: author 1 with `descendants` posts and comments (a hundredth posts, the rest their comments, evenly),
/// and author 2 with 10 posts of 9 comments each, which the delete must leave alone.
public struct CascadeInput: Sendable {
    public let authors: [GraphAuthor]
    public let posts: [GraphPost]
    public let comments: [GraphComment]
    /// What author 2 keeps.
    public let survivingPosts = 10
    public let survivingComments = 90

    public init(descendants: Int) {
        let postCount = Swift.max(1, descendants / 100)
        let perPost = Swift.max(0, descendants / postCount - 1)
        authors = [GraphAuthor(id: 1, name: "doomed"), GraphAuthor(id: 2, name: "kept")]
        var posts: [GraphPost] = []
        var comments: [GraphComment] = []
        func add(author: Int64, posts count: Int, comments each: Int) {
            for _ in 0..<count {
                let post = GraphPost(id: Int64(posts.count + 1), authorID: author, title: "post \(posts.count + 1)")
                posts.append(post)
                for _ in 0..<each {
                    comments.append(
                        GraphComment(
                            id: Int64(comments.count + 1), postID: post.id, body: "comment \(comments.count + 1)"))
                }
            }
        }
        add(author: 1, posts: postCount, comments: perPost)
        add(author: 2, posts: survivingPosts, comments: survivingComments / survivingPosts)
        self.posts = posts
        self.comments = comments
    }

    /// How many records the delete removes: the author, its posts and their comments.
    public var deleted: Int { posts.count + comments.count + 1 - survivingPosts - survivingComments }
}
