import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

struct SchemaTests {
    @Test func refusesAChangedModelAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try builder(directory).create()
                try db.create(Note(id: 1, title: "First", body: "kept"))
            }
            do {
                _ = try builder(directory, [NoteV2.self]).create()
                Issue.record("a changed model must not open")
            } catch let error as PersistenceError {
                #expect(error.code == .migrationRequired)
                #expect(error.message.contains("'Note.pinned' added"))
                #expect(error.message.contains("'Note.body' removed"))
            }
            let reopened = try builder(directory).create()
            #expect(try reopened.recover(Note.self, id: 1) == Note(id: 1, title: "First", body: "kept"))
        }
    }

    @Test func opensWhenOnlyAttributeOrderChanged() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try builder(directory).create()
                try db.create(Note(id: 1, title: "First", body: "kept"))
            }
            let reordered = try builder(directory, [NoteReordered.self]).create()
            #expect(
                try reordered.recover(NoteReordered.self, id: 1) == NoteReordered(body: "kept", title: "First", id: 1))
        }
    }

    @Test func recordsTheModelVersion() throws {
        try withTemporaryDirectory { directory in
            var versioned = builder(directory)
            versioned.model.version = 3
            let db = try versioned.create()
            let version = try db.read {
                try $0.scalar("SELECT value FROM persistence_metadata WHERE key = ?", [.text("modelVersion")])
            }
            #expect(version == .integer(3))
        }
    }

    @Test func oneModelVersionPerStore() throws {
        try withTemporaryDirectory { directory in
            var v3 = builder(directory)
            v3.model.version = 3
            try v3.create().create(Note(id: 1, title: "First", body: "kept"))
            let file = directory.appendingPathComponent("Notes.sqlite")
            let before = try Data(contentsOf: file)
            let older = expectError(.invalidConfiguration) { try builder(directory).create() }
            #expect(older?.message.contains("newer") == true, "\(older!)")
            #expect(try Data(contentsOf: file) == before, "an older model leaves a newer store untouched")
            var sameVersion = builder(directory, [NoteV2.self])
            sameVersion.model.version = 3
            let unbumped = expectError(.migrationRequired) { try sameVersion.create() }
            #expect(unbumped?.message.contains("bump") == true, "\(unbumped!)")
            var v4 = builder(directory)
            v4.model.version = 4
            let db = try v4.create()
            #expect(try db.recover(Note.self, id: 1)?.body == "kept", "a bump without a schema change opens")
            let version = try db.read {
                try $0.scalar("SELECT value FROM persistence_metadata WHERE key = ?", [.text("modelVersion")])
            }
            #expect(version == .integer(4))
        }
    }

    @Test func refusesANewerFormat() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try builder(directory).create()
                try db.write {
                    try $0.execute("UPDATE persistence_metadata SET value = 99 WHERE key = 'formatVersion'")
                }
            }
            expectError(.unsupportedFormatVersion) { try builder(directory).create() }
        }
    }

    /// Every store has had a schema version from its creation: one without is damaged — the same answer as LMDB's
    /// and PostgreSQL's (SQLite once read it as version 0 and migrated from there).
    @Test func aMissingModelVersionIsDamage() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try builder(directory).create()
                try db.write { try $0.execute("DELETE FROM persistence_metadata WHERE key = 'modelVersion'") }
            }
            var newer = builder(directory)
            newer.model.version = 2
            for opening in [builder(directory), newer] {
                let error = expectError(.corrupt) { try opening.create() }
                #expect(error?.message.contains("no valid schema version") == true, "\(String(describing: error))")
            }
        }
    }

    @Test func refusesFilesThatAreNotStores() throws {
        try withTemporaryDirectory { directory in
            let garbage = directory.appendingPathComponent("Garbage.sqlite")
            try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: garbage)
            expectError(.corrupt) { try builder(directory, name: "Garbage").create() }
            let original = try Data(contentsOf: garbage)
            #expect(original.count == 8192, "a refused file is left as it was")

            let foreign = try builder(directory, name: "Foreign").create()
            try foreign.write { try $0.execute("DROP TABLE persistence_metadata") }
            expectError(.invalidSchema) { try builder(directory, name: "Foreign").create() }
        }
    }

    @Test func reportsAFullStoreAndStaysUsable() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.create(Note(id: 1, title: "small"))
            let pages = try db.read { try $0.scalar("PRAGMA page_count") }
            guard case .integer(let count)? = pages else {
                Issue.record("no page count")
                return
            }
            try db.write { try $0.execute("PRAGMA max_page_count = \(count + 2)") }
            let big = String(repeating: "x", count: 64 * 1024)
            expectError(.storageFull) {
                try db.write { context in
                    for id in 2...50 { try context.create(Note(id: Int64(id), title: "big", body: big)) }
                }
            }
            #expect(try db.count(Note.self) == 1, "the failed write left nothing behind")
            try db.create(Note(id: 2, title: "still works"))
            #expect(try db.count(Note.self) == 2)
        }
    }
}

struct NoteReordered: Entity, Equatable {
    var body: String?
    var title: String
    var id: Int64
    static var entityName: String { "Note" }
    static let indexes: [Index] = [.on("title")]
}
