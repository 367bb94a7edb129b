import Foundation
import PersistenceCore
import Testing

@testable import PersistenceSQLite

// verify() reads a full-text index as searches do and compares it with the records: here the FTS5 table is damaged
// behind the library's back, through a connection of its own (raw SQL through a context would rebuild the index).

private func damaged(_ sql: String, in db: SQLiteDatabase) throws {
    let file = try #require(db.fileURL)
    let connection = try Connection(path: file.path, readOnly: false, busyTimeoutMilliseconds: 5_000)
    defer { connection.close() }
    try connection.execute(sql)
}

private func kinds(_ report: VerificationReport) -> Set<VerificationProblem.Kind> { Set(report.problems.map(\.kind)) }

@Test func verifyFindsAFullTextIndexThatNoLongerHoldsTheRecords() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ftverify-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var builder = SQLiteBuilder(databaseName: "Pages", model: Model(version: 1, entities: [Page.self]))
    builder.directory = directory
    let db = try builder.create()
    try db.create((1...20).map { Page(id: $0, text: "page number \($0) \($0 % 2 == 0 ? "even" : "odd")") })
    let sound = try db.verify()
    #expect(sound.isSound, "\(sound)")
    // Every token of every record: "page", "number", the number, "even" or "odd".
    #expect(sound.indexEntriesChecked == 80)

    // Two records' documents swapped: the counts agree, the tokens' records don't.
    try damaged(
        "UPDATE persistence_fulltext_Page_text SET c0 = CASE rowid WHEN 3 THEN 'page number 4 even' "
            + "ELSE 'page number 3 odd' END WHERE rowid IN (3, 4)", in: db)
    var report = try db.verify()
    #expect(kinds(report) == [.indexEntryMismatch], "\(report)")
    #expect(report.problems.first?.index == "fulltext_Page_text")
    #expect(!report.description.contains("even"), "problems name no token")

    // A record left out: fewer records and tokens than the records make.
    try damaged("DELETE FROM persistence_fulltext_Page_text WHERE rowid = 7", in: db)
    report = try db.verify()
    #expect(kinds(report) == [.indexEntryMissing, .indexEntryMismatch], "\(report)")

    // A document no record has: more.
    try damaged(
        "INSERT INTO persistence_fulltext_Page_text (rowid, c0) VALUES (7, 'page number 7 odd'), "
            + "(99, 'page number 99 odd')", in: db)
    report = try db.verify()
    #expect(kinds(report) == [.danglingIndexEntry, .indexEntryMismatch], "\(report)")
}
