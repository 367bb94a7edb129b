import Foundation
import PersistenceLMDB
import PersistenceSQLite

/// A note as version 1 of the app stored it.
struct NoteV1: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String
    static var entityName: String { "Note" }

    static let model = Model(version: 1, entities: [NoteV1.self])

    /// The notes `seed` makes: every field follows from the id (bodies of 0 to 11 words, some with non-ASCII text).
    static func sample(_ id: Int64) -> NoteV1 {
        let words = (0..<(id % 12)).map { "word\($0)" } + (id % 5 == 0 ? ["café", "naïve"] : [])
        return NoteV1(id: id, title: "Note \(id)", body: words.joined(separator: " "))
    }
}

/// A note as version 2 stores it: a word count computed from the body by the migration, and `pinned`, added with a
/// default.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String
    var words: Int
    var pinned: Bool
    static let defaultValues: [String: Value] = ["pinned": false]
    static let indexes: [Index] = [.on("words")]
}

/// An entity version 2 adds.
struct Tag: Entity, Equatable {
    var id: Int64
    var name: String
}

/// The app's model and migrations, as the app itself ships them.
enum Notes {
    static let model = Model(version: 2, entities: [Note.self, Tag.self])

    static func wordCount(_ body: String?) -> Int {
        (body ?? "").split(whereSeparator: \.isWhitespace).count
    }

    /// SQLite and PostgreSQL: version 1 as shipped, and the mapping that counts the words (the rest is inferred).
    static let plan = MigrationPlan(
        models: [NoteV1.model],
        mappings: [
            MappingModel(
                from: 1, to: 2, [.transform("Note", ["words": .value { Notes.wordCount(try $0.string("body")) }])])
        ])

    /// LMDB: the migration block that counts the words.
    static let migration: MigrationBlock = { migration, _ in
        try migration.enumerateObjects(ofType: "Note") { old, new in
            try new?.set("words", to: Notes.wordCount(try old?.string("body")))
        }
    }
}
