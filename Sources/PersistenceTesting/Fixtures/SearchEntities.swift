package import Foundation
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

/// A passage with an embedding of 8 dimensions (none for some), ranked by distance in the vector checks.
package struct Passage: Entity, Equatable {
    package var id: Int64
    package var lang: String
    package var embedding: Vector?

    package init(id: Int64, lang: String, embedding: Vector?) {
        self.id = id
        self.lang = lang
        self.embedding = embedding
    }

    package static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 8)]
    package static let indexes: [Index] = [.on("lang")]
}

/// A passage keyed by text, with a required embedding of 3 dimensions.
package struct Point: Entity, Equatable {
    package var id: String
    package var position: Vector

    package init(id: String, position: Vector) {
        self.id = id
        self.position = position
    }

    package static let vectorAttributes: [VectorAttribute] = [.init("position", dimensions: 3)]
}

/// The entities of the search checks' databases.
let searchEntities: [any Entity.Type] = [Story.self, Memo.self, Person.self, Passage.self, Point.self]

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

/// ``Passage`` before its embedding was declared a vector: an earlier or later version of the model.
package struct PlainPassage: Entity, Equatable {
    package var id: Int64
    package var lang: String
    package var embedding: Data?

    package init(id: Int64, lang: String, embedding: Data?) {
        self.id = id
        self.lang = lang
        self.embedding = embedding
    }

    package static var entityName: String { "Passage" }
    package static let indexes: [Index] = [.on("lang")]
}
