import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceSQLite

struct BuilderTests {
    @Test(arguments: [
        "", "a/b", "..", "../escape", "a..b", "a\\b", "nul\u{0}byte", ".", String(repeating: "n", count: 201),
    ])
    func refusesBadNames(_ name: String) throws {
        try withTemporaryDirectory { directory in
            expectError(.invalidName) { try builder(directory, name: name).create() }
            let listing = try contents(of: directory)
            #expect(listing.isEmpty, "nothing is created when the name is refused")
        }
    }

    @Test func deletesItsStoreWithCompanionsAndBackups() throws {
        try withTemporaryDirectory { directory in
            let notes = builder(directory)
            let db = try notes.create()
            try db.create(Note(id: 1, title: "kept"))
            expectError(.storeInUse) { try notes.deleteStore() }
            try builder(directory, name: "Other").create().close()
            // A migration backup of this store, and one of a store whose name merely starts alike.
            try Data("backup".utf8).write(to: directory.appendingPathComponent("Notes.v1.sqlite-backup"))
            try Data("backup".utf8).write(to: directory.appendingPathComponent("Notes.vx.sqlite-backup"))
            try db.close()
            #expect(try notes.deleteStore())
            #expect(try contents(of: directory) == ["Notes.vx.sqlite-backup", "Other.sqlite"])
            #expect(try SQLiteDatabase.storeNames(in: directory) == ["Other"])
            var memory = notes
            memory.inMemory = true
            #expect(try !memory.deleteStore())
        }
    }

    @Test func refusesMissingAndUnusableDirectories() throws {
        try withTemporaryDirectory { directory in
            var missing = builder(directory)
            missing.directory = directory.appendingPathComponent("missing", isDirectory: true)
            expectError(.directoryNotFound) { try missing.create() }
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("missing").path))

            let file = directory.appendingPathComponent("file")
            #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))
            var notADirectory = builder(directory)
            notADirectory.directory = file
            expectError(.directoryNotFound) { try notADirectory.create() }
        }
        // /proc refuses new files even to root, which chmod can't arrange.
        var unwritable = SQLiteBuilder(databaseName: "Notes", entities: [Note.self])
        unwritable.directory = URL(fileURLWithPath: "/proc/self")
        expectError(.permissionDenied) { try unwritable.create() }
    }

    @Test func refusesConflictingOptions() throws {
        try withTemporaryDirectory { directory in
            var both = builder(directory)
            both.inMemory = true
            expectError(.invalidConfiguration) { try both.create() }
            var noReaders = builder(directory)
            noReaders.maximumReaders = 0
            expectError(.invalidConfiguration) { try noReaders.create() }
            var negative = builder(directory)
            negative.busyTimeout = .seconds(-1)
            expectError(.invalidConfiguration) { try negative.create() }
            expectError(.invalidConfiguration) { try builder(directory, []).create() }
            expectError(.invalidSchema) { try builder(directory, [Note.self, NoteV2.self]).create() }
            let listing = try contents(of: directory)
            #expect(listing.isEmpty, "nothing is created when options are refused")
        }
    }

    @Test func createsTheFileAndTables() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            #expect(db.fileURL?.lastPathComponent == "Notes.sqlite")
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Notes.sqlite").path))
            let objects = try db.read { context in
                try context.rows("SELECT type, name FROM sqlite_schema ORDER BY name").map {
                    "\($0["type"].map(text) ?? ""):\($0["name"].map(text) ?? "")"
                }
            }
            #expect(objects.contains("table:Note"))
            #expect(objects.contains("index:index_Note_title"))
            #expect(objects.contains("table:persistence_metadata"))
            let mode = try db.write { try $0.scalar("PRAGMA journal_mode") }
            #expect(mode == .text("wal"))
        }
    }

    @Test func leavesOnlyTheStoreFileWhenClosed() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try builder(directory).create()
                try db.create(Note(id: 1, title: "one"))
                #expect(try db.count(Note.self) == 1, "a read opens a reader connection")
            }
            let listing = try contents(of: directory)
            #expect(listing == ["Notes.sqlite"], "the WAL is checkpointed and its files removed")
        }
    }

    @Test func inMemoryDatabasesWork() throws {
        var memory = SQLiteBuilder(databaseName: "Memory", entities: [Note.self])
        memory.inMemory = true
        let db = try memory.create()
        #expect(db.fileURL == nil)
        try db.create(Note(id: 1, title: "kept in memory"))
        #expect(try db.recover(Note.self, id: 1)?.title == "kept in memory")
        try db.write { _ in
            // One connection: a read inside a write on the same thread can't see committed-only data.
            expectError(.nestedTransaction) { try db.count(Note.self) }
        }
    }

    @Test func defaultDirectoryIsPerUserAndNamedAfterTheProgram() {
        let directory = StoreLocation.defaultDirectory
        #expect(directory.lastPathComponent == ProcessInfo.processInfo.processName)
        #expect(!directory.path.hasPrefix(FileManager.default.temporaryDirectory.path))
    }
}

func text(_ value: Value) -> String {
    if case .text(let text) = value { return text }
    return ""
}
