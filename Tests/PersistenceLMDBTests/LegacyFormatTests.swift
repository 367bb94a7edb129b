import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Stores written by earlier versions keep opening: `Fixtures/Format2.lmdb` is a real format-2 store (scrypt,
/// AES-256-GCM, HMAC-SHA256 index keys), written by commit aea6f18 with `scripts/make-format2-fixture.sh`.
///
/// A format-2 store is read with its own suite and stays format 2 while it is used; changing its passphrase
/// rewrites only the key record, as format 3 naming the suite the values were written with. Its values and index
/// keys are never rewritten.
struct LegacyFormatTests {
    /// ReliabilityWorker's `Note`, as the fixture stores it.
    struct Note: Entity, Equatable {
        static let entityName = "Note"
        static let indexes: [Index] = [.on("tag")]
        var id: Int64
        var title: String
        var tag: String
        var score: Double

        static func expected(_ id: Int64) -> Note {
            Note(
                id: id, title: "note \(id) " + String(repeating: "abc", count: Int(id % 40)), tag: "t\(id % 10)",
                score: Double(id) * 1.5)
        }
    }

    static let passphrase = "reliability"
    static let recordCount: Int64 = 40

    /// A copy of the fixture in a fresh directory, so a test can write to it.
    static func withFixture<R>(_ body: (URL) throws -> R) throws -> R {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/Format2.lmdb")
        return try withTemporaryDirectory { directory in
            try FileManager.default.copyItem(at: fixture, to: directory.appendingPathComponent("Reliability.lmdb"))
            return try body(directory)
        }
    }

    static func builder(_ directory: URL, passphrase: String = passphrase) -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: "Reliability", passphrase: passphrase, entities: [Note.self])
        builder.directory = directory
        return builder
    }

    static func expectAllRecords(_ db: LMDBDatabase, plus extra: [Note] = []) throws {
        let all: [Note] = try db.recover(Note.self)
        let expected = (1...recordCount).map(Note.expected) + extra
        #expect(all.sorted { $0.id < $1.id } == expected.sorted { $0.id < $1.id })
        let t3: [Note] = try db.recover(key: "tag", value: "t3")
        #expect(t3.map(\.id).sorted() == [3, 13, 23, 33])
    }

    @Test func opensAFormatTwoStoreAndReadsEveryRecord() throws {
        try Self.withFixture { directory in
            let db = try Self.builder(directory).create()
            let state = try PassphraseChangeTests.keyState(db)
            #expect(state.format == 2)
            guard case .wrapped(let record) = state.record else {
                Issue.record("the fixture has no wrapped key record")
                return
            }
            #expect(record.algorithm == "scrypt")
            #expect(record.suite == nil)
            try Self.expectAllRecords(db)
            #expect(try db.verify().isSound)
        }
    }

    @Test func writesToAFormatTwoStoreWithItsOwnSuite() throws {
        try Self.withFixture { directory in
            let extra = Note(id: 41, title: "written by today's code", tag: "t3", score: -1)
            do {
                let db = try Self.builder(directory).create()
                try db.create(extra)
                var changed = Note.expected(7)
                changed.title = "changed"
                try db.update(changed)
                #expect(try PassphraseChangeTests.keyState(db).format == 2)
            }
            let reopened = try Self.builder(directory).create()
            var expected = (1...Self.recordCount).map(Note.expected) + [extra]
            expected[6].title = "changed"
            let all: [Note] = try reopened.recover(Note.self)
            #expect(all.sorted { $0.id < $1.id } == expected)
            let t3: [Note] = try reopened.recover(key: "tag", value: "t3")
            #expect(t3.map(\.id).sorted() == [3, 13, 23, 33, 41])
            #expect(try reopened.verify().isSound)
        }
    }

    @Test func refusesAWrongPassphrase() throws {
        try Self.withFixture { directory in
            #expect {
                _ = try Self.builder(directory, passphrase: "reliability!").create()
            } throws: { error in
                (error as? PersistenceError)?.code == .wrongPassphrase
            }
            // The refusal touched nothing.
            try Self.expectAllRecords(try Self.builder(directory).create())
        }
    }

    @Test func aPassphraseChangeRecordsTheSuiteAsFormatThree() throws {
        try Self.withFixture { directory in
            let db = try Self.builder(directory).create()
            try db.changePassphrase(from: Self.passphrase, to: "new passphrase", keyDerivation: .owaspMinimum)
            let state = try PassphraseChangeTests.keyState(db)
            #expect(state.format == 3)
            guard case .wrapped(let record) = state.record else {
                Issue.record("the change wrote no wrapped key record")
                return
            }
            #expect(record.algorithm == "argon2id")
            #expect(record.parameters == .owaspMinimum)
            // The values were written with AES-256-GCM and HMAC-SHA256 index keys, and stay so.
            #expect(record.cipher == .aes256gcm)
            #expect(record.indexHash == .hmacSHA256)
            try Self.expectAllRecords(db)

            let reopened = try Self.builder(directory, passphrase: "new passphrase").create()
            try Self.expectAllRecords(reopened)
            #expect(try reopened.verify().isSound)
            #expect(throws: PersistenceError.self) { _ = try Self.builder(directory).create() }
        }
    }
}
