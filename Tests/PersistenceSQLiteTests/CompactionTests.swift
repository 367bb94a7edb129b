import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// `compact()` gives back the pages deletes and table rebuilds leave free, and keeps every record.
struct CompactionTests {
    private static func fileSize(_ directory: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("Notes.sqlite").path)
        return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test func compactingGivesBackFreePagesAndKeepsTheData() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            let body = String(repeating: "x", count: 400)
            try db.create((1...20_000).map { Note(id: Int64($0), title: "note \($0)", body: body) })
            try db.write { _ = try $0.delete(Note.self, where: Field("id") > 2_000) }
            _ = try db.checkForExternalChanges()
            let reclaimable = try db.reclaimableBytes
            #expect(reclaimable > 5_000_000, "18,000 deleted notes of 400 bytes leave their pages free")
            let before = try Self.fileSize(directory)

            let freed = try db.compact()
            #expect(freed >= reclaimable / 2, "freed \(freed) of \(reclaimable) reclaimable bytes")
            #expect(try Self.fileSize(directory) == before - freed)
            #expect(try db.reclaimableBytes == 0)
            #expect(try db.count(Note.self) == 2_000)
            #expect(try db.recover(Note.self, id: 1_999)?.body == body)
            #expect(try db.recover(Note.self, key: "title", value: "note 7").map(\.id) == [7], "indexes rebuilt")
            #expect(try db.verify().isSound)
            // Nothing left to give back: compacting again frees nothing.
            #expect(try db.compact() == 0)
        }
    }

    @Test func compactingInsideATransactionIsRefused() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.create(Note(id: 1, title: "kept", body: nil))
            expectError(.nestedTransaction) { try db.read { _ in try db.compact() } }
            expectError(.nestedTransaction) { try db.write { _ in try db.compact() } }
            #expect(try db.count(Note.self) == 1)
        }
    }

    @Test func inMemoryThereIsNothingToGiveBack() async throws {
        var builder = SQLiteBuilder(databaseName: "Notes", entities: [Note.self])
        builder.inMemory = true
        let db = try builder.create()
        try db.create(Note(id: 1, title: "kept", body: nil))
        #expect(try db.reclaimableBytes == 0)
        #expect(try await db.compact() == 0)
        #expect(try db.count(Note.self) == 1)
    }
}
