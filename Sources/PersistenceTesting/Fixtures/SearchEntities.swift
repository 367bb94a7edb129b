package import PersistenceCore

/// A story with a full-text index over its title and body, and a trigram index over its title.
package struct Story: Entity, Equatable {
    package var id: Int64
    package var title: String
    package var body: String?
    package var section: String
    package var published: Bool

    package init(id: Int64, title: String, body: String?, section: String = "news", published: Bool = true) {
        self.id = id
        self.title = title
        self.body = body
        self.section = section
        self.published = published
    }

    package static let fullTextIndexes: [FullTextIndex] = [
        .on("title", "body", stopWords: ["the", "a", "of", "and"]), .on("title", tokenizer: .trigram),
    ]
    package static let indexes: [Index] = [.on("section")]
}

/// A memo keyed by text, indexed for full-text search over its text.
package struct Memo: Entity, Equatable {
    package var id: String
    package var text: String

    package init(id: String, text: String) {
        self.id = id
        self.text = text
    }

    package static let fullTextIndexes: [FullTextIndex] = [.on("text")]
}

/// The entities of the search checks' databases.
let searchEntities: [any Entity.Type] = [Story.self, Memo.self, Person.self]

/// ``Story`` without its full-text indexes: an earlier or later version of the model.
package struct PlainStory: Entity, Equatable {
    package var id: Int64
    package var title: String
    package var body: String?
    package var section: String
    package var published: Bool

    package static var entityName: String { "Story" }
    package static let indexes: [Index] = [.on("section")]
}

/// ``Story`` with one full-text index, over its title only.
package struct TitleStory: Entity, Equatable {
    package var id: Int64
    package var title: String
    package var body: String?
    package var section: String
    package var published: Bool

    package static var entityName: String { "Story" }
    package static let indexes: [Index] = [.on("section")]
    package static let fullTextIndexes: [FullTextIndex] = [.on("title")]
}
