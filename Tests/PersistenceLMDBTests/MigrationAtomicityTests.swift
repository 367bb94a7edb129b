import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// A migration commits whole or not at all, runs its block once, and keeps an encrypted store encrypted.
@Suite struct MigrationAtomicityTests {
    struct NoteV1: Entity {
        var id: Int64
        var body: String
        var tag: String
        static var entityName: String { "Note" }
        static let indexes: [Index] = [.on("tag")]
    }

    struct NoteV2: Entity {
        var id: Int64
        var text: String
        var tag: String
        var words: Int
        static var entityName: String { "Note" }
        static let indexes: [Index] = [.on("tag"), .on("words")]
    }

    static let oldMarker = "old-plaintext-marker"
    static let newMarker = "NEW-PLAINTEXT-MARKER"

    func builder(_ directory: URL, _ version: Int, _ type: any Entity.Type, block: MigrationBlock? = nil)
        -> LMDBBuilder
    {
        var builder = LMDBBuilder(
            databaseName: "Notes", passphrase: "notes", model: Model(version: version, entities: [type]))
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        builder.migrationBlock = block
        return builder
    }

    func seed(_ directory: URL, count: Int, mapSize: Int? = nil) throws {
        var builder = builder(directory, 1, NoteV1.self)
        if let mapSize { builder.initialMapSize = mapSize }
        let db = try builder.create()
        try db.write { context in
            for id in 1...count {
                try context.create(NoteV1(id: Int64(id), body: "\(Self.oldMarker) \(id) one two", tag: "t\(id % 7)"))
            }
        }
    }

    static let toV2: MigrationBlock = { migration, _ in
        try migration.renameProperty(onType: "Note", from: "body", to: "text")
        try migration.enumerateObjects(ofType: "Note") { old, new in
            let body = try old?.string("body") ?? ""
            try new?.set("words", to: body.split(separator: " ").count)
            try new?.set("text", to: body.replacingOccurrences(of: Self.oldMarker, with: Self.newMarker))
        }
    }

    /// Every record's stored bytes (sealed) by id.
    func storedRecords(_ directory: URL, count: Int) throws -> [Data?] {
        let db = try builder(directory, 1, NoteV1.self).create()
        return try db.read { context in try (1...count).map { try context.storedBytes(of: NoteV1.self, id: Int64($0)) }
        }
    }

    @Test func aBlockThatThrowsHalfwayChangesNothing() throws {
        try withTemporaryDirectory { directory in
            let count = 10_000
            try seed(directory, count: count)
            let before = try storedRecords(directory, count: count)
            let failing = builder(directory, 2, NoteV2.self) { migration, version in
                try Self.toV2(migration, version)
                var seen = 0
                try migration.enumerateObjects(ofType: "Note") { _, new in
                    seen += 1
                    try new?.set("tag", to: "rewritten")
                    if seen == count / 2 { throw CancellationError() }
                }
            }
            let error = expectError(.migrationFailed) { _ = try failing.create() }
            #expect(error?.underlyingError is CancellationError)
            // The version is still 1 (a v1 builder opens it), and every record is byte for byte as it was.
            #expect(try storedRecords(directory, count: count) == before)
            let db = try builder(directory, 1, NoteV1.self).create()
            #expect(try db.count(NoteV1.self, where: Field("tag") == "t3") == count / 7 + (count % 7 >= 3 ? 1 : 0))
            #expect(try db.verify().isSound)
        }
    }

    @Test func anEncryptedStoreStaysEncrypted() throws {
        try withTemporaryDirectory { directory in
            try seed(directory, count: 500)
            let db = try builder(directory, 2, NoteV2.self, block: Self.toV2).create()
            let note = try #require(try db.recover(NoteV2.self, id: 7))
            #expect(note.text == "\(Self.newMarker) 7 one two" && note.words == 4)
            #expect(try db.recover(NoteV2.self, key: "words", value: 4).count == 500)
            let file = try Data(contentsOf: dataFile(directory, name: "Notes"))
            #expect(file.offset(of: Data(Self.oldMarker.utf8)) == nil, "no old value in plaintext")
            #expect(file.offset(of: Data(Self.newMarker.utf8)) == nil, "no new value in plaintext")
            #expect(file.offset(of: Data("one two".utf8)) == nil)
            #expect(try db.verify().isSound)
        }
    }

    @Test func theBlockRunsOnceWhenTheMapMustGrow() throws {
        try withTemporaryDirectory { directory in
            // A 1 MiB map holding ~0.6 MiB of records: the migration's rewrites need several times that.
            try seed(directory, count: 3_000, mapSize: 1 << 20)
            let calls = Mutex(0)
            var builder = builder(directory, 2, NoteV2.self) { migration, version in
                calls.withLock { $0 += 1 }
                try Self.toV2(migration, version)
            }
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            #expect(calls.withLock { $0 } == 1)
            #expect(try db.count(NoteV2.self) == 3_000)
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
        }
    }
}
