import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// Full-text indexes across model versions: declaring, changing or dropping one is a schema change every backend
/// migrates without code, rebuilding the index from the records.
enum FullTextMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("inferred: declares, changes and drops a full-text index, rebuilt from the records") {
            try lifecycle($0)
        }
    ]

    static func lifecycle(_ stores: MigrationStores) throws {
        let stories = FullTextChecks.stories
        do {
            let opened = try stores.open("Search", Model(version: 1, entities: [PlainStory.self]))
            try opened.database.create(
                stories.map {
                    PlainStory(id: $0.id, title: $0.title, body: $0.body, section: $0.section, published: $0.published)
                })
            expectError(.invalidArgument, "no index declared yet") {
                try opened.database.search(PlainStory.self, Query(search: .matching("actor")))
            }
            try opened.database.close()
        }
        do {
            let opened = try stores.open("Search", Model(version: 2, entities: [Story.self]))
            #expect(opened.report?.steps.map(\.kind) == [.inferred])
            #expect(try indexes(of: opened.database) == ["fulltext_Story_title_body", "fulltext_trigram_Story_title"])
            try FullTextChecks.expectRanked(opened.database, "swift actor*")
            try FullTextChecks.expectRanked(opened.database, "\"garbage collector\"")
            #expect(try opened.database.count(Story.self) == stories.count, "the records were kept")
            try opened.database.close()
        }
        do {
            let opened = try stores.open("Search", Model(version: 3, entities: [TitleStory.self]))
            #expect(try indexes(of: opened.database) == ["fulltext_Story_title"])
            let found = try opened.database.recover(TitleStory.self, query: Query(search: .matching("actor*")))
            let titled = stories.filter { FullTextReference.words(of: $0.title).contains { $0.hasPrefix("actor") } }
            #expect(found.map(\.id).sorted() == titled.map(\.id).sorted(), "the index now holds titles only")
            try opened.database.close()
        }
        do {
            let opened = try stores.open("Search", Model(version: 4, entities: [PlainStory.self]))
            #expect(try indexes(of: opened.database).isEmpty, "the dropped indexes are gone from the store")
            #expect(try opened.database.count(PlainStory.self) == stories.count)
            try opened.database.close()
        }
    }

    /// The full-text indexes the store holds, declared or not.
    static func indexes(of database: any Database) throws -> [String] {
        try database.read { context in
            try (context as? any FullTextMaintaining)?.storedFullTextIndexNames().sorted() ?? []
        }
    }
}
