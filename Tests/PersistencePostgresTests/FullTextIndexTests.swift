import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistencePostgres

/// An article indexed for full-text search.
struct IndexedArticle: Entity, Equatable {
    var id: String
    var text: String
    static let fullTextIndexes: [FullTextIndex] = [.on("text")]
}

struct FullTextIndexTests {
    @Test func theIndexIsATsvectorTableUnderGINAndSearchesUseIt() async throws {
        try await offPool {
            let builder = try freshBuilder([IndexedArticle.self])
            defer { _ = try? builder.deleteStore() }
            let db = try builder.create()
            try db.create(
                (1...30).map { IndexedArticle(id: "a\($0)", text: "article \($0) \($0 % 3 == 0 ? "fizz" : "")") })
            let state = try db.read { context in
                try context.storage.fullTextIndexState(context.graph.layouts[0].fullTextIndexes[0], entity: 0)
            }
            #expect(state?.isComplete == true)
            let plan = try db.read { context in
                try context.rows(
                    "SELECT count(*) FROM \(quoteIdentifier(builder.schema))."
                        + "\(PostgresStorage.fullTextTableName("fulltext_IndexedArticle_text")) WHERE tokens @@ 'fizz'::tsquery"
                )
            }
            #expect(plan.first?.values.first == .integer(10))
            let found = try db.recover(IndexedArticle.self, query: Query(search: .matching("fizz")))
            #expect(found.map(\.id).sorted() == (1...30).filter { $0 % 3 == 0 }.map { "a\($0)" }.sorted())
        }
    }

    @Test func aRecordTooLongForATsvectorIsRefusedAndNothingIsWritten() async throws {
        try await offPool {
            let builder = try freshBuilder([IndexedArticle.self])
            defer { _ = try? builder.deleteStore() }
            let db = try builder.create()
            let error = #expect(throws: PersistenceError.self) {
                try db.create(IndexedArticle(id: "long", text: String(repeating: "again ", count: 300)))
            }
            #expect(error?.code == .unsupported)
            #expect(try db.count(IndexedArticle.self) == 0)
            try db.create(IndexedArticle(id: "fits", text: String(repeating: "again ", count: 255)))
            #expect(try db.recover(IndexedArticle.self, query: Query(search: .matching("again"))).map(\.id) == ["fits"])
        }
    }
}

private func quoteIdentifier(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
