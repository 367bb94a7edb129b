import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Encrypted stores with each cipher: what the key record names is what the store opens with, on any machine; the
/// key memory is wiped when the database closes.
struct CipherSuiteTests {
    /// How a store's values are sealed, as a builder chooses it.
    enum Sealing: String, CaseIterable, CustomTestStringConvertible {
        /// AES-256-GCM through libsodium's precomputed state (what a machine with AES instructions picks).
        case aes
        /// AES-256-GCM through swift-crypto (what a machine without them uses for an AES store).
        case portableAES
        /// XChaCha20-Poly1305 (what a machine without AES instructions picks for a new store).
        case xchacha

        var cipher: ValueCipher { self == .xchacha ? .xchacha20poly1305 : .aes256gcm }
        var testDescription: String { rawValue }

        func builder(_ directory: URL) -> LMDBBuilder {
            var builder = secrets(directory)
            builder.valueCipher = cipher
            builder.usesPortableAES = self == .portableAES
            return builder
        }
    }

    static func fill(_ db: LMDBDatabase) throws {
        for id in Int64(1)...50 {
            try db.create(
                Secret(id: id, note: "note \(id) " + String(repeating: "x", count: Int(id)), tag: "t\(id % 5)"))
        }
    }

    static func expectFilled(_ db: LMDBDatabase, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let all: [Secret] = try db.recover(Secret.self)
        #expect(all.count == 50, sourceLocation: sourceLocation)
        #expect(try db.recover(Secret.self, id: 17)?.note == "note 17 " + String(repeating: "x", count: 17))
        let t2: [Secret] = try db.recover(key: "tag", value: "t2")
        #expect(t2.map(\.id).sorted() == [2, 7, 12, 17, 22, 27, 32, 37, 42, 47], sourceLocation: sourceLocation)
        let unique: [Secret] = try db.recover(key: "note", value: "note 3 xxx")
        #expect(unique.map(\.id) == [3], sourceLocation: sourceLocation)
    }

    @Test(arguments: Sealing.allCases)
    func eachCipherStoresReadsAndRecordsItself(sealing: Sealing) throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try sealing.builder(directory).create()
                try Self.fill(db)
                let record = try #require(try PassphraseChangeTests.wrappedRecord(db))
                #expect(record.cipher == sealing.cipher)
                #expect(record.indexHash == .blake2b)
                #expect(try PassphraseChangeTests.keyState(db).format == 3)
                // The sealed value starts with its nonce: the counter, then the random tail.
                let sealed = try #require(try PassphraseChangeTests.storedRecord(db, id: 1))
                #expect(sealed.count > sealing.cipher.nonceByteCount + ValueCipher.tagByteCount)
            }
            // A builder that says nothing about the cipher opens the store with the one it records.
            let reopened = try secrets(directory).create()
            try Self.expectFilled(reopened)
            #expect(try reopened.verify().isSound)
            // Tampering is caught with every cipher.
            let sealed = try #require(try PassphraseChangeTests.storedRecord(reopened, id: 9))
            var damaged = sealed
            damaged[damaged.startIndex + sealed.count / 2] ^= 0x04
            _ = try reopened.environment.writer.withLock {
                try reopened.environment.write { transaction in
                    try transaction.put(
                        try reopened.environment.database(named: "entity:Secret"), KeyCodec.encode(.integer(9)), damaged
                    )
                }
            }
            expectError(.authenticationFailed) { try reopened.recover(Secret.self, id: 9) }
            #expect(try reopened.recover(Secret.self, id: 10)?.id == 10)
        }
    }

    @Test func anAESStoreOpensWhereLibsodiumHasNoAES() throws {
        // Written with libsodium's AES (on this machine, when it has AES instructions), read and written with
        // swift-crypto's, then read with libsodium's again: the same bytes either way.
        try withTemporaryDirectory { directory in
            do {
                let db = try Sealing.aes.builder(directory).create()
                try Self.fill(db)
            }
            do {
                let portable = try Sealing.portableAES.builder(directory).create()
                try Self.expectFilled(portable)
                try portable.update(Secret(id: 3, note: "note 3 xxx", tag: "portable"))
            }
            let native = try Sealing.aes.builder(directory).create()
            try Self.expectFilled(native)
            #expect(try native.recover(Secret.self, id: 3)?.tag == "portable")
        }
    }

    @Test func aBuilderCannotChangeAStoresCipher() throws {
        // The recorded cipher wins: asking for XChaCha20-Poly1305 on an AES store reads it with AES.
        try withTemporaryDirectory { directory in
            do { try Self.fill(try Sealing.aes.builder(directory).create()) }
            let db = try Sealing.xchacha.builder(directory).create()
            try Self.expectFilled(db)
            #expect(try PassphraseChangeTests.wrappedRecord(db)?.cipher == .aes256gcm)
        }
    }

    @Test func aKeyRecordEditedToNameAnotherSuiteIsCorrupt() throws {
        try withTemporaryDirectory { directory in
            let db = try Sealing.aes.builder(directory).create()
            try Self.fill(db)
            let record = try #require(try PassphraseChangeTests.wrappedRecord(db))
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let original = try encoder.encode(record)
            var otherCipher = record
            otherCipher.cipher = .xchacha20poly1305
            var otherHash = record
            otherHash.indexHash = .hmacSHA256
            var noSuite = record
            noSuite.cipher = nil
            noSuite.indexHash = nil
            let unknownCipher = Data(
                String(decoding: original, as: UTF8.self).replacingOccurrences(of: "aes-256-gcm", with: "rot13")
                    .utf8)
            for edited in [
                try encoder.encode(otherCipher), try encoder.encode(otherHash), try encoder.encode(noSuite),
                unknownCipher,
            ] {
                try PassphraseChangeTests.editMeta(db) { try $0.write(.keyWrap, edited) }
                expectError(.corrupt) { try secrets(directory).create() }
            }
            try PassphraseChangeTests.editMeta(db) { try $0.write(.keyWrap, original) }
            try Self.expectFilled(try secrets(directory).create())
        }
    }

    @Test func closingWipesTheKeyMemory() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try Self.fill(db)
            let probe = try #require(db.keyMemoryProbe)
            try Self.expectFilled(db)
            #expect(!probe.isWiped)
            try db.close()
            #expect(probe.isWiped)
            #expect(probe.wasZeroWhenFreed)
            expectError(.closed) { try db.recover(Secret.self, id: 1) }
            // The store is intact and opens again with fresh key memory.
            let reopened = try secrets(directory).create()
            try Self.expectFilled(reopened)
            #expect(reopened.keyMemoryProbe.map { !$0.isWiped } == true)
        }
    }

    @Test func anUnencryptedStoreHasNoKeyMemory() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Plain", entities: [Secret.self])
            builder.directory = directory
            let db = try builder.create()
            #expect(db.keyMemoryProbe == nil)
            #expect(!db.isEncrypted)
            #expect(try secrets(directory).create().isEncrypted)
        }
    }
}
