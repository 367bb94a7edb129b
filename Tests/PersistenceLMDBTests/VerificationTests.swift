import Foundation
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// `verify()` on LMDB: each kind of damage, made by writing raw bytes past the context's bookkeeping, is reported
/// by kind, entity, primary key and index — on encrypted and unencrypted stores.
struct VerificationTests {
    /// Ten records: note "note i" (unique index), tag "t(i % 3)" (index).
    static func seeded(_ directory: URL, encrypted: Bool) throws -> LMDBDatabase {
        let db: LMDBDatabase
        if encrypted {
            db = try secrets(directory).create()
        } else {
            var builder = LMDBBuilder.unencrypted(databaseName: "Secrets", entities: [Secret.self])
            builder.directory = directory
            db = try builder.create()
        }
        try db.create((1...10).map { Secret(id: Int64($0), note: "note \($0)", tag: "t\($0 % 3)") })
        return db
    }

    @Test(arguments: [true, false])
    func intactStoreIsSound(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
            #expect(report.entitiesChecked == 1)
            #expect(report.recordsChecked == 10)
            #expect(report.indexEntriesChecked == 20)
        }
    }

    @Test(arguments: [true, false])
    func reportsAMissingIndexEntry(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            try db.raw { transaction, store in
                let tagIndex = try store.index("tag")
                let noteIndex = try store.index("note")
                let removedTag = try transaction.delete(tagIndex.dbi, db.sealer.indexKey([.text("t1")]), value: key(4))
                let removedNote = try transaction.delete(noteIndex.dbi, db.sealer.indexKey([.text("note 2")]))
                #expect(removedTag && removedNote)
            }
            let problems = try db.verify().problems.located
            #expect(problems.count == 2, "\(problems)")
            #expect(problems.contains(problem(.indexEntryMissing, key: "4", index: "index_Secret_tag")))
            #expect(problems.contains(problem(.indexEntryMissing, key: "2", index: "unique_Secret_note")))
        }
    }

    @Test(arguments: [true, false])
    func reportsADanglingIndexEntry(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            try db.raw { transaction, store in
                try transaction.put(store.index("tag").dbi, db.sealer.indexKey([.text("t0")]), key(999))
            }
            let report = try db.verify()
            #expect(report.problems.located == [problem(.danglingIndexEntry, key: "999", index: "index_Secret_tag")])
            #expect(report.indexEntriesChecked == 21)
        }
    }

    @Test(arguments: [true, false])
    func reportsAnEntryPointingAtTheWrongRecord(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            // Record 1 has tag "t1"; file it under "t0" as well, as a damaged index might.
            try db.raw { transaction, store in
                try transaction.put(store.index("tag").dbi, db.sealer.indexKey([.text("t0")]), key(1))
            }
            let problems = try db.verify().problems.located
            #expect(problems == [problem(.indexEntryMismatch, key: "1", index: "index_Secret_tag")])
            // A lookup through the entry sees the damage too (DamagedIndexTests): it is not an answer without record 1.
            expectError(.corrupt) { try db.count(Secret.self, where: Field("tag") == "t0") }
        }
    }

    @Test(arguments: [true, false])
    func reportsATamperedRecord(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            try db.write { context in
                var bytes = try #require(try context.storedBytes(of: Secret.self, id: 7))
                bytes[bytes.count / 2] ^= 0x10
                if !encrypted { bytes = Data([0xFF, 0xFF]) }
                try context.overwriteStoredBytes(of: Secret.self, id: 7, with: bytes)
            }
            let report = try db.verify()
            #expect(
                report.problems.located == [problem(encrypted ? .authenticationFailed : .recordUnreadable, key: "7")])
            #expect(report.recordsChecked == 10)
        }
    }

    @Test(arguments: [true, false])
    func reportsTwoRecordsSharingAUniqueValue(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            // Record 2 takes record 1's note without its indexes changing: what a lost index update leaves.
            try db.reseal(id: 2, [.integer(2), .text("note 1"), .text("t2")])
            let problems = try db.verify().problems.located
            #expect(problems.contains(problem(.uniqueViolation, key: "2", index: "unique_Secret_note")))
            #expect(problems.contains(problem(.indexEntryMismatch, key: "2", index: "unique_Secret_note")))
            #expect(problems.count == 2, "\(problems)")
            #expect(try db.verify().problems.allSatisfy { !$0.description.contains("note 1") }, "no values")
        }
    }

    @Test(arguments: [true, false])
    func reportsAValueOfTheWrongTypeAndAKeyMismatch(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            try db.reseal(id: 3, [.integer(3), .integer(12), .null])
            try db.reseal(id: 4, [.integer(40), .text("note 4"), .text("t1")])
            let problems = try db.verify().problems.located
            #expect(problems.contains(problem(.typeMismatch, key: "3", attribute: "note")))
            #expect(problems.contains(problem(.missingValue, key: "3", attribute: "tag")))
            #expect(problems.contains(problem(.keyMismatch, key: "4")))
        }
    }

    @Test(arguments: [true, false])
    func reportsMissingMetadata(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            var keys: [StoreMetadata.Key] = [.format, .schema, .schemaVersion]
            if encrypted { keys += [.keyWrap, .nonceCounter] }
            for key in keys {
                let saved = try db.raw { transaction, _ in
                    let saved = try StoreMetadata.read(key, db.metaDBI, transaction)
                    try transaction.delete(db.metaDBI, Data(key.rawValue.utf8))
                    return saved
                }
                let report = try db.verify()
                #expect(report.problems.map(\.kind) == [.metadataMissing], "\(key): \(report)")
                try db.raw { transaction, _ in
                    try StoreMetadata.write(key, try #require(saved), db.metaDBI, transaction)
                }
            }
            #expect(try db.verify().isSound)
        }
    }

    @Test func reportsANonceCounterBehindTheRecords() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: true)
            try db.raw { transaction, _ in try StoreMetadata.writeNumber(.nonceCounter, 3, db.metaDBI, transaction) }
            #expect(try db.verify().problems.map(\.kind) == [.metadataInvalid])
        }
    }

    @Test(arguments: [true, false])
    func reportsADatabaseTheModelDoesNotDeclare(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory, encrypted: encrypted)
            try db.raw { transaction, _ in
                _ = try db.environment.database(named: "index:index_Secret_ghost", flags: 0, in: transaction)
                _ = try db.environment.database(named: "someday", flags: 0, in: transaction)
            }
            #expect(try db.verify().problems.map(\.kind) == [.schemaMismatch])
        }
    }

    @Test func verifiesOffThePool() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try Self.seeded(directory, encrypted: true)
        try db.raw { transaction, store in try transaction.put(store.dbi, key(1), Data(repeating: 0, count: 40)) }
        let report = try await db.verify()
        #expect(report.problems.located == [problem(.authenticationFailed, key: "1")])
    }
}

/// A problem of the `Secret` entity, as a report would list it.
private func problem(
    _ kind: VerificationProblem.Kind, key: String, attribute: String? = nil, index: String? = nil
) -> VerificationProblem {
    VerificationProblem(kind, entity: "Secret", primaryKey: key, attribute: attribute, index: index, message: "")
}

/// The record key of a `Secret` id.
func key(_ id: Int64) throws -> Data { try KeyCodec.encode(.integer(id)) }

extension VerificationProblem {
    /// Problems compare by where and what, not by their wording.
    fileprivate var located: VerificationProblem {
        VerificationProblem(
            kind, entity: entity, primaryKey: primaryKey, attribute: attribute, index: index, message: "")
    }
}

extension [VerificationProblem] {
    /// The problems without their wording, to compare with `problem(_:key:attribute:index:)`.
    fileprivate var located: [VerificationProblem] { map(\.located) }
}

extension EntityStore {
    func index(_ attribute: String) throws -> IndexStore {
        try #require(indexes.first { $0.index.attributes == [attribute] })
    }
}

extension LMDBDatabase {
    /// Runs `body` in a write transaction on the raw LMDB transaction and the `Secret` store.
    @discardableResult
    func raw<R>(_ body: (Transaction, EntityStore) throws -> R) throws -> R {
        let store = try #require(stores.all.first)
        return try write { context in try body(context.transaction, store) }
    }

    /// Replaces a record's stored values (sealed like a write would) without touching its index entries.
    func reseal(id: Int64, _ values: [Value]) throws {
        try raw { transaction, store in
            let recordKey = try key(id)
            var nonces = NonceSequence(
                startingAt: try StoreMetadata.readNumber(.nonceCounter, metaDBI, transaction) ?? 0)
            let sealer = try sealer
            let sealed = try sealer.seal(values, entity: store, key: recordKey) { try nonces.next() }
            try transaction.put(store.dbi, recordKey, sealed)
            if sealer.isEncrypted { try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, metaDBI, transaction) }
        }
    }
}
