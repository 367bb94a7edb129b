import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// A page indexed for full-text search.
struct Page: Entity, Equatable {
    var id: Int64
    var text: String
    static let fullTextIndexes: [FullTextIndex] = [.on("text")]
}

/// The same entity without its index.
struct PlainPage: Entity, Equatable {
    var id: Int64
    var text: String
    static var entityName: String { "Page" }
}

private func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fulltext-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

private func pages(_ directory: URL, _ type: any Entity.Type, version: Int = 1) throws -> SQLiteDatabase {
    var builder = SQLiteBuilder(databaseName: "Pages", model: Model(version: version, entities: [type]))
    builder.directory = directory
    return try builder.create()
}

private func ids(_ db: SQLiteDatabase, _ text: String) throws -> [Int64] {
    try db.recover(Page.self, query: Query(search: .matching(text))).map(\.id).sorted()
}

private func indexedRows(_ db: SQLiteDatabase) throws -> Int64? {
    try db.read { context in
        guard case .integer(let count)? = try context.scalar("SELECT count(*) FROM persistence_fulltext_Page_text")
        else { return nil }
        return count
    }
}

private func state(_ db: SQLiteDatabase) throws -> FullTextIndexState? {
    try db.read { context in
        guard
            case .blob(let data)? = try context.scalar(
                "SELECT state FROM persistence_fulltext_state WHERE name = 'fulltext_Page_text'")
        else { return nil }
        return try FullTextIndexState(encoded: data)
    }
}

@Test func theIndexIsAnFTS5TableKeptInStepEvenWithRawSQL() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let db = try pages(directory, Page.self)
    try db.create((1...20).map { Page(id: $0, text: "page number \($0) \($0 % 2 == 0 ? "even" : "odd")") })
    #expect(try indexedRows(db) == 20)
    #expect(try state(db)?.isComplete == true)
    #expect(try ids(db, "even").count == 10)
    // Raw SQL changes what the context can't name: the index is rebuilt before the write commits.
    try db.write { context in
        _ = try context.execute("UPDATE \"Page\" SET \"text\" = 'zebra crossing' WHERE \"id\" = 3")
        #expect(try context.recover(Page.self, query: Query(search: .matching("zebra"))).map(\.id) == [3])
    }
    #expect(try ids(db, "zebra") == [3])
    #expect(try ids(db, "odd").count == 9)
    #expect(try indexedRows(db) == 20)
}

@Test func declaringAnIndexBuildsItAndDroppingItDropsItsTables() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    do {
        let db = try pages(directory, PlainPage.self)
        try db.create((1...5).map { PlainPage(id: $0, text: "plain page \($0)") })
    }
    do {
        // The same version with an index declared: the schema changed.
        let error = #expect(throws: PersistenceError.self) { try pages(directory, Page.self) }
        #expect(error?.code == .migrationRequired)
        #expect(error?.message.contains("full-text index 'fulltext_Page_text' added") == true)
    }
    do {
        let db = try pages(directory, Page.self, version: 2)
        #expect(try ids(db, "plain") == [1, 2, 3, 4, 5])
        #expect(try indexedRows(db) == 5)
        #expect(try state(db)?.schemaVersion == 2)
    }
    do {
        let db = try pages(directory, PlainPage.self, version: 3)
        let tables = try db.read { context in
            try context.rows("SELECT name FROM sqlite_master WHERE name LIKE 'persistence_fulltext%'")
                .map { $0.values[0] }
        }
        #expect(!tables.contains(.text("persistence_fulltext_Page_text")))
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM persistence_fulltext_state") } == .integer(0))
    }
}

@Test func anInterruptedBuildResumesAndSearchesReadTheRecordsMeanwhile() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    do {
        let db = try pages(directory, Page.self)
        try db.create((1...2_500).map { Page(id: $0, text: "word\($0 % 7) common") })
        // As if a build had begun and been interrupted after its first batch.
        try db.write { context in
            let index = context.graph.layouts[0].fullTextIndexes[0]
            try context.storage.setFullTextIndexState(
                FullTextIndexState(fingerprint: index.fingerprint, schemaVersion: 1, isComplete: false), index: index,
                entity: 0, emptying: true)
            #expect(try !context.buildFullTextIndexes(schemaVersion: 1, batch: 1_000))
        }
        #expect(try indexedRows(db) == 1_000)
        #expect(try state(db)?.builtThrough == .integer(1_000))
        #expect(try ids(db, "word3").count == (1...2_500).filter { $0 % 7 == 3 }.count, "read from the records")
    }
    let db = try pages(directory, Page.self)
    #expect(try indexedRows(db) == 2_500)
    #expect(try state(db)?.isComplete == true)
    #expect(try ids(db, "word3").count == (1...2_500).filter { $0 % 7 == 3 }.count)
}
