import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// The tool's maintenance without entity types: `LMDBStoredStore.changePassphrase` (as `LMDBDatabase`'s, format
/// upgrade included) and `LMDBStoredStore.compact` (all or nothing).
struct StoredMaintenanceTests {
    @Test func aFormatOneStoreBecomesFormatThreeKeepingItsKeys() throws {
        try withTemporaryDirectory { directory in
            let db = try PassphraseChangeTests.formatOne(directory).create()
            try PassphraseChangeTests.fill(db)
            try db.close()
            let file = dataFile(directory)
            let change = try LMDBStoredStore.changePassphrase(
                file: file, from: PassphraseChangeTests.old, to: PassphraseChangeTests.new, keyDerivation: nil)
            #expect(change.formatBefore == 1 && change.formatAfter == 3)
            #expect(change.keyDerivationAfter == change.keyDerivationBefore)

            #expect(throws: PersistenceError.self) {
                try LMDBStoredStore(file: file, passphrase: PassphraseChangeTests.old).close()
            }
            let reopened = try secrets(directory, passphrase: PassphraseChangeTests.new).create()
            try PassphraseChangeTests.expectFilled(reopened)
            #expect(try PassphraseChangeTests.keyState(reopened).format == 3)

            // Open in this process: refused before anything is read.
            let error = #expect(throws: PersistenceError.self) {
                _ = try LMDBStoredStore.changePassphrase(
                    file: file, from: PassphraseChangeTests.new, to: "other", keyDerivation: nil)
            }
            #expect(error?.code == .storeInUse)
            try reopened.close()
        }
    }

    @Test func aRefusedCopyLeavesTheStoreAsItWasAndNothingBeside() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try PassphraseChangeTests.fill(db)
            try db.close()
            let file = dataFile(directory)
            let bytes = try Data(contentsOf: file)
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            struct Refused: Error {}
            #expect(throws: Refused.self) {
                _ = try LMDBStoredStore.compact(file: file) { copy in
                    #expect(FileManager.default.fileExists(atPath: copy.path))
                    throw Refused()
                }
            }
            #expect(try Data(contentsOf: file) == bytes)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)

            // An LMDB file Persistence did not make is refused, untouched.
            let foreign = directory.appendingPathComponent("Foreign.lmdb")
            try Data(count: 0).write(to: foreign)
            #expect(throws: PersistenceError.self) { _ = try LMDBStoredStore.compact(file: foreign) { _ in } }
            #expect(throws: PersistenceError.self) {
                _ = try LMDBStoredStore.changePassphrase(file: foreign, from: "a", to: "b", keyDerivation: nil)
            }
            #expect(try Data(contentsOf: foreign).isEmpty)

            let compaction = try LMDBStoredStore.compact(file: file) { _ in }
            #expect(compaction.bytesAfter <= compaction.bytesBefore)
            let reopened = try secrets(directory).create()
            try PassphraseChangeTests.expectFilled(reopened)
            try reopened.close()
        }
    }
}
