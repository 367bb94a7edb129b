import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// Raw SQL in an observed read: its tables can't be inferred, so what it reads must be named.
struct ObservedRawSQLTests {
    static let titles = "SELECT group_concat(\"title\", ',') FROM (SELECT \"title\" FROM \"Note\" ORDER BY \"id\")"

    @Test func aRawReadTrackingNothingThrowsUntrackedRead() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try builder(directory).create()
        var untracked = ValueObservation.tracking { (context: SQLiteContext) in try context.scalar(Self.titles) }
            .values(in: db).makeAsyncIterator()
        await expectAsyncError(.untrackedRead) { try await untracked.next() }
        #expect(try await untracked.next() == nil, "the observation ended with its error")
        // The same through db.observe(tracking:) with nothing listed.
        var listedNothing = db.observe(tracking: []) { try $0.scalar(Self.titles) }.makeAsyncIterator()
        await expectAsyncError(.untrackedRead) { try await listedNothing.next() }
    }

    @Test func aRawReadIsTrackedForWhatItNames() async throws {
        let directory = try makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try builder(directory).create()
        var titles = ValueObservation.tracking([Note.self]) { (context: SQLiteContext) in
            try context.scalar(Self.titles)
        }.values(in: db).makeAsyncIterator()
        #expect(try await titles.next() == .some(.null))
        try await db.write { try $0.create(Note(id: 1, title: "a")) }
        #expect(try await titles.next() == .text("a"))
        // Also through a typed read beside it: typed reads are tracked, the raw one through the list.
        var mixed = db.observe(tracking: [Note.self]) { context in
            "\(try context.count(Note.self)) \(try context.scalar(Self.titles) ?? .null)"
        }.makeAsyncIterator()
        #expect(try await mixed.next() == "1 \(Value.text("a"))")
        try await db.write { try $0.create(Note(id: 2, title: "b")) }
        #expect(try await titles.next() == .text("a,b"))
        #expect(try await mixed.next() == "2 \(Value.text("a,b"))")
    }

    private func makeDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("raw-observe-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }
}
