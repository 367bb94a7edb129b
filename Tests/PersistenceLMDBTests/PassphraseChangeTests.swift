import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// Changing an encrypted store's passphrase: key wrapping (formats 2 and 3), the upgrade of format-1 stores,
/// atomicity.
struct PassphraseChangeTests {
    static let old = "correct horse battery staple"
    static let new = "PASSPHRASE-AFTER-THE-CHANGE-7f3a"

    /// Three records, two sharing an indexed tag.
    static func fill(_ db: LMDBDatabase) throws {
        try db.create(Secret(id: 1, note: "first", tag: "red"))
        try db.create(Secret(id: 2, note: "second", tag: "red"))
        try db.create(Secret(id: 3, note: "third", tag: "blue"))
    }

    /// Checks the records of ``fill(_:)`` are there and found through both indexes.
    static func expectFilled(_ db: LMDBDatabase, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try db.recover(Secret.self, id: 1)?.note == "first", sourceLocation: sourceLocation)
        let red: [Secret] = try db.recover(key: "tag", value: "red")
        #expect(red.map(\.id).sorted() == [1, 2], sourceLocation: sourceLocation)
        let third: [Secret] = try db.recover(key: "note", value: "third")
        #expect(third.map(\.id) == [3], sourceLocation: sourceLocation)
    }

    /// Cheap scrypt, the only function format 1 has.
    static let formatOneKeyDerivation = KeyDerivation.scrypt(logN: 10, blockSize: 8, parallelism: 1)

    /// A builder that creates a store in format 1, as versions before key wrapping did.
    static func formatOne(_ directory: URL, passphrase: String = old) -> LMDBBuilder {
        var builder = secrets(directory, passphrase: passphrase)
        builder.createsDerivedKeyFormat = true
        builder.keyDerivation = formatOneKeyDerivation
        return builder
    }

    /// The store's format and key record as committed.
    static func keyState(_ db: LMDBDatabase) throws -> (format: UInt64?, record: StoreKeyRecord?) {
        try db.environment.read { transaction in
            let meta = try db.environment.database(named: StoreMetadata.databaseName)
            let format = try StoreMetadata.readNumber(.format, meta, transaction)
            return (format, try StoreKeyRecord.read(format: format ?? 1, meta, transaction))
        }
    }

    /// Runs `body` in a write transaction on the meta database, as a tool that edits the file would.
    static func editMeta(_ db: LMDBDatabase, _ body: (MetaEditor) throws -> Void) throws {
        try db.environment.writer.withLock {
            try db.environment.write { transaction in
                let meta = try db.environment.database(named: StoreMetadata.databaseName)
                try body(MetaEditor(meta: meta, transaction: transaction))
            }
        }
    }

    struct MetaEditor {
        let meta: UInt32
        let transaction: Transaction

        func read(_ key: StoreMetadata.Key) throws -> Data? { try StoreMetadata.read(key, meta, transaction) }
        func write(_ key: StoreMetadata.Key, _ value: Data) throws {
            try StoreMetadata.write(key, value, meta, transaction)
        }
        func delete(_ key: StoreMetadata.Key) throws { try StoreMetadata.delete(key, meta, transaction) }
    }

    @Test func newEncryptedStoresWrapTheirKeysAndUnencryptedOnesStayFormatOne() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            let state = try Self.keyState(db)
            #expect(state.format == 3)
            guard case .wrapped(let record) = state.record else {
                Issue.record("a new encrypted store has no wrapped key record")
                return
            }
            #expect(record.wrappedKeys.count == 12 + 96 + 16)
            #expect(record.salt.count == 32)
            #expect(record.parameters == testKeyDerivation)
            #expect(record.algorithm == "argon2id")
            #expect(record.cipher == ValueCipher.preferred)
            #expect(record.indexHash == .blake2b)

            var plainBuilder = LMDBBuilder.unencrypted(databaseName: "Plain", entities: [Secret.self])
            plainBuilder.directory = directory
            let plain = try plainBuilder.create()
            let plainState = try Self.keyState(plain)
            #expect(plainState.format == 1)
            #expect(plainState.record == nil)
        }
    }

    @Test func onlyTheNewPassphraseOpensTheStoreAfterAChange() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try Self.fill(db)
            try db.changePassphrase(from: Self.old, to: Self.new)

            expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.old).create() }
            let reopened = try secrets(directory, passphrase: Self.new).create()
            try Self.expectFilled(reopened)
            try reopened.create(Secret(id: 4, note: "fourth", tag: "red"))
            let red: [Secret] = try reopened.recover(key: "tag", value: "red")
            #expect(red.count == 3)

            // The handle open during the change holds the data keys, which did not change.
            #expect(try db.recover(Secret.self, id: 4)?.note == "fourth")
            let redThroughOldHandle: [Secret] = try db.recover(key: "tag", value: "red")
            #expect(redThroughOldHandle.count == 3)
            try db.create(Secret(id: 5, note: "fifth", tag: "blue"))
            #expect(try reopened.count(Secret.self) == 5)
        }
    }

    @Test func changesTwiceWithNewKeyDerivationParameters() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try Self.fill(db)
            let stronger = KeyDerivation.scrypt(logN: 11, blockSize: 8, parallelism: 1)
            try db.changePassphrase(from: Self.old, to: "second", keyDerivation: stronger)
            #expect(try Self.keyState(db).record?.parameters == stronger)
            let saltAfterFirst = try Self.wrappedRecord(db)?.salt
            try db.changePassphrase(from: "second", to: "third")
            #expect(try Self.keyState(db).record?.parameters == stronger, "nil keeps the store's parameters")
            #expect(try Self.wrappedRecord(db)?.salt != saltAfterFirst, "every change draws a new salt")

            expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.old).create() }
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "second").create() }
            try Self.expectFilled(try secrets(directory, passphrase: "third").create())
        }
    }

    @Test func upgradesAFormatOneStoreWithoutRewritingItsValues() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.formatOne(directory).create()
            try Self.fill(db)
            let before = try Self.keyState(db)
            #expect(before.format == 1)
            guard case .derived = before.record else {
                Issue.record("the format-1 builder did not write a key derivation record")
                return
            }
            // Format-1 stores keep opening with the current code.
            try Self.expectFilled(try secrets(directory).create())
            let sealedBefore = try Self.storedRecord(db, id: 1)

            try db.changePassphrase(from: Self.old, to: Self.new)

            let after = try Self.keyState(db)
            #expect(after.format == 3)
            guard case .wrapped = after.record else {
                Issue.record("the upgrade did not write a wrapped key record")
                return
            }
            var leftover: Data?
            try Self.editMeta(db) { leftover = try $0.read(.keyDerivation) }
            #expect(leftover == nil, "the format-1 record is gone")
            #expect(try Self.storedRecord(db, id: 1) == sealedBefore, "values are not rewritten")
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.old).create() }
            let reopened = try secrets(directory, passphrase: Self.new).create()
            try Self.expectFilled(reopened)
            try reopened.create(Secret(id: 4, note: "fourth", tag: "blue"))
            let blue: [Secret] = try reopened.recover(key: "tag", value: "blue")
            #expect(blue.map(\.id).sorted() == [3, 4])
        }
    }

    /// Pins format 1's derivation to values computed independently (Python's hashlib.scrypt and hmac), so the
    /// refactoring around key wrapping cannot silently change how existing stores' keys are derived.
    @Test func formatOneKeyDerivationIsUnchanged() throws {
        let keys = try StoreKeys.derive(
            passphrase: Self.old, salt: Data((0..<32).map { UInt8($0) }), parameters: Self.formatOneKeyDerivation)
        #expect(hex(keys.keyCheckValue()) == "3b944c3774481908ec31c599df118992fb312c5a4eaf85a40327065f68c3b030")
        #expect(
            hex(keys.indexHash(Data("abc".utf8))) == "2b61f6206995e20bc5eabb834adaf1b6d245b5efc92d0dac45b278eabab3b139")
    }

    @Test func refusesUnencryptedStoresAndEmptyOrWrongPassphrases() throws {
        try withTemporaryDirectory { directory in
            var plainBuilder = LMDBBuilder.unencrypted(databaseName: "Plain", entities: [Secret.self])
            plainBuilder.directory = directory
            let plain = try plainBuilder.create()
            expectError(.invalidConfiguration) { try plain.changePassphrase(from: "any", to: "thing") }

            let db = try secrets(directory).create()
            try Self.fill(db)
            let file = try Data(contentsOf: dataFile(directory))
            expectError(.invalidConfiguration) { try db.changePassphrase(from: Self.old, to: "") }
            expectError(.invalidConfiguration) { try db.changePassphrase(from: "", to: Self.new) }
            expectError(.wrongPassphrase) { try db.changePassphrase(from: "guess", to: Self.new) }
            let tooCheap = KeyDerivation.scrypt(logN: 4, blockSize: 8, parallelism: 1)
            expectError(.invalidConfiguration) {
                try db.changePassphrase(from: Self.old, to: Self.new, keyDerivation: tooCheap)
            }
            #expect(try Data(contentsOf: dataFile(directory)) == file, "a refused change writes nothing")
            try Self.expectFilled(try secrets(directory).create())
        }
    }

    @Test func acceptsTheCurrentPassphraseInAnyNormalizationForm() throws {
        try withTemporaryDirectory { directory in
            let composed = "caf\u{E9}"
            let decomposed = "cafe\u{301}"
            let db = try secrets(directory, passphrase: composed).create()
            try db.changePassphrase(from: decomposed, to: "ne\u{301}w")
            _ = try secrets(directory, passphrase: "n\u{E9}w").create()
        }
    }

    @Test func reportsADamagedWrappedKeyRecordAsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            guard var record = try Self.wrappedRecord(db) else {
                Issue.record("no wrapped key record")
                return
            }
            let original = try JSONEncoder().encode(record)
            record.wrappedKeys[20] ^= 0x01
            let flipped = try JSONEncoder().encode(record)
            record.wrappedKeys = record.wrappedKeys.prefix(40)
            let truncated = try JSONEncoder().encode(record)
            let damaged: [Data] = [
                flipped, truncated, Data("{\"algorithm\":".utf8), Data(original.dropLast(5)), Data([0xFF, 0x00]),
            ]
            for bytes in damaged {
                try Self.editMeta(db) { try $0.write(.keyWrap, bytes) }
                expectError(.corrupt) { try secrets(directory).create() }
                expectError(.corrupt) { try db.changePassphrase(from: Self.old, to: Self.new) }
            }
            // Missing, or next to a format-1 record: never read as unencrypted, never as format 1.
            try Self.editMeta(db) { try $0.delete(.keyWrap) }
            expectError(.corrupt) { try secrets(directory).create() }
            expectError(.corrupt) { try LMDBBuilder.unencryptedSecrets(directory).create() }
            try Self.editMeta(db) {
                try $0.write(.keyWrap, original)
                try $0.write(.keyDerivation, Data("{}".utf8))
            }
            expectError(.corrupt) { try secrets(directory).create() }
            try Self.editMeta(db) { try $0.delete(.keyDerivation) }
            _ = try secrets(directory).create()
        }
    }

    @Test func writesNeitherThePassphraseNorKeyMaterialToTheFile() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.formatOne(directory).create()
            try Self.fill(db)
            try db.changePassphrase(from: Self.old, to: Self.new)
            try db.changePassphrase(from: Self.new, to: Self.new + "!")
            let file = try Data(contentsOf: dataFile(directory))
            #expect(file.offset(of: Data(Self.new.utf8)) == nil)
            #expect(file.offset(of: Data(Self.old.utf8)) == nil)
            guard let keys = try Self.keyState(db).record?.unlock(passphrase: Self.new + "!") else {
                Issue.record("no key record")
                return
            }
            let material = keys.withMaterial { Data($0) }
            #expect(material.count == 96)
            for start in stride(from: 0, to: 96, by: 16) {
                let slice = material[start..<start + 16]
                #expect(file.offset(of: slice) == nil, "key bytes \(start)..<\(start + 16) are in the file")
            }
        }
    }

    @Test func aChangeThatFailsBeforeCommitChangesNothing() throws {
        struct InjectedFailure: Error {}
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try Self.fill(db)
            let before = try Self.keyState(db)
            #expect(throws: InjectedFailure.self) {
                try db.changePassphrase(from: Self.old, to: Self.new, keyDerivation: nil) {
                    throw InjectedFailure()
                }
            }
            #expect(try Self.keyState(db).record == before.record)
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.new).create() }
            try Self.expectFilled(try secrets(directory, passphrase: Self.old).create())

            // The same for the upgrade of a format-1 store.
            let legacyDirectory = directory.appendingPathComponent("legacy", isDirectory: true)
            try FileManager.default.createDirectory(at: legacyDirectory, withIntermediateDirectories: true)
            let legacy = try Self.formatOne(legacyDirectory).create()
            let legacyBefore = try Self.keyState(legacy)
            #expect(throws: InjectedFailure.self) {
                try legacy.changePassphrase(from: Self.old, to: Self.new, keyDerivation: nil) {
                    throw InjectedFailure()
                }
            }
            #expect(try Self.keyState(legacy) == legacyBefore)
        }
    }

    /// Two handles change the passphrase at once from the same current one: whatever the interleaving, one wins and
    /// the other finds the passphrase it was given no longer current (the write re-checks the record it verified).
    @Test func oneOfTwoConcurrentChangesWins() throws {
        try withTemporaryDirectory { directory in
            let first = try secrets(directory).create()
            let second = try secrets(directory).create()
            try Self.fill(first)
            let handles = [first, second]
            let outcomes = Mutex<[Int: PersistenceError.Code?]>([:])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                var outcome: PersistenceError.Code?
                do {
                    try handles[index].changePassphrase(from: Self.old, to: "winner \(index)")
                } catch let error as PersistenceError {
                    outcome = error.code
                } catch {
                    outcome = .backend
                }
                outcomes.withLock { $0[index] = outcome }
            }
            let results = outcomes.withLock { $0 }
            let winners = results.filter { $0.value == nil }.map(\.key)
            #expect(winners.count == 1, "\(results)")
            #expect(results.values.filter { $0 == .wrongPassphrase }.count == 1, "\(results)")
            guard let winner = winners.first else { return }
            try Self.expectFilled(try secrets(directory, passphrase: "winner \(winner)").create())
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "winner \(1 - winner)").create() }
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.old).create() }
        }
    }

    @Test func changesThePassphraseFromAsyncCode() async throws {
        // withTemporaryDirectory takes no async body: the same, by hand.
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("persistence-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let db = try secrets(directory).create()
        try Self.fill(db)
        try await db.changePassphrase(from: Self.old, to: Self.new)
        expectError(.wrongPassphrase) { try secrets(directory, passphrase: Self.old).create() }
        try Self.expectFilled(try secrets(directory, passphrase: Self.new).create())
    }

    /// The store's wrapped key record, when it has one.
    static func wrappedRecord(_ db: LMDBDatabase) throws -> WrappedKeyRecord? {
        guard case .wrapped(let record) = try keyState(db).record else { return nil }
        return record
    }

    /// The sealed bytes of a `Secret` record as stored.
    static func storedRecord(_ db: LMDBDatabase, id: Int64) throws -> Data? {
        try db.environment.read { transaction in
            try transaction.get(try db.environment.database(named: "entity:Secret"), KeyCodec.encode(.integer(id)))
        }
    }
}

private func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

extension LMDBBuilder {
    /// An unencrypted builder for the `Secrets` store of ``secrets(_:passphrase:)``.
    fileprivate static func unencryptedSecrets(_ directory: URL) -> LMDBBuilder {
        var builder = LMDBBuilder.unencrypted(databaseName: "Secrets", entities: [Secret.self])
        builder.directory = directory
        return builder
    }
}
