import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// What a discarded edit leaves on SQLite when it outgrows the page cache: SQLite then spills dirty pages into the
/// `-wal` file before the edit ends, as frames without a commit mark. The database file stays byte for byte as it was,
/// no read ever sees those frames, and a checkpoint never copies them into the database file.
struct DiscardedEditTests {
    @Test func aLargeDiscardedEditLeavesTheDatabaseFileAndEveryReadAsTheyWere() throws {
        try withTemporaryDirectory { directory in
            let first = try builder(directory).create()
            try first.write { context in
                try context.create((1...100).map { Note(id: $0, title: "kept \($0)", body: nil) })
            }
            // Closing checkpoints: everything committed so far is in the database file, compared alone.
            try first.close()
            let db = try builder(directory).create()
            let file = directory.appendingPathComponent("Notes.sqlite")
            let before = try Data(contentsOf: file)
            let wal = directory.appendingPathComponent("Notes.sqlite-wal")
            let walBefore = (try? Data(contentsOf: wal).count) ?? 0

            let body = String(repeating: "x", count: 200)
            let decision = try db.edit { context in
                try context.create((1_000..<9_000).map { Note(id: Int64($0), title: "draft \($0)", body: body) })
                return .discard
            }
            #expect(decision == .discard)
            // The edit outgrew the cache: SQLite spilled pages into the -wal (what the README says may happen).
            #expect(try Data(contentsOf: wal).count > walBefore, "no spill: the edit no longer tests what it should")
            #expect(try Data(contentsOf: file) == before, "a discarded edit wrote to the database file")
            #expect(try db.count(Note.self) == 100)
            // A checkpoint (closing runs one) copies committed frames only: the spilled ones never reach the file.
            try db.close()
            #expect(try Data(contentsOf: file) == before)
            let reopened = try builder(directory).create()
            #expect(try reopened.count(Note.self) == 100)
            try reopened.create(Note(id: 101, title: "next", body: nil))
            #expect(try reopened.count(Note.self) == 101)
        }
    }
}
