import Foundation
import PersistenceLMDB
import PersistenceTesting
import Testing

struct PassphraseTests {
    @Test func refusesAWrongPassphraseBeforeTouchingTheFile() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try secrets(directory).create()
                try db.create(Secret(id: 1, note: "n", tag: "t"))
            }
            let before = try Data(contentsOf: dataFile(directory))
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "wrong").create() }
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "correct horse battery stapl").create() }
            let after = try Data(contentsOf: dataFile(directory))
            #expect(before == after, "a refused passphrase changes nothing on disk")
            let reopened = try secrets(directory).create()
            #expect(try reopened.recover(Secret.self, id: 1)?.note == "n")
        }
    }

    @Test func opensUnencryptedStoresFromEntityTypes() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Plain", entities: [Secret.self], schemaVersion: 3)
            builder.directory = directory
            #expect(builder.passphrase == nil)
            #expect(builder.model.version == 3, "one number: the schema version is the model version")
            #expect(builder.schemaVersion == 3)
            let db = try builder.create()
            #expect(!db.isEncrypted)
            try db.create(Secret(id: 1, note: "visible", tag: "t"))
            #expect(try Data(contentsOf: dataFile(directory, name: "Plain")).offset(of: Data("visible".utf8)) != nil)
        }
    }

    @Test func refusesAWrongPassphraseWhileTheStoreIsOpen() throws {
        try withTemporaryDirectory { directory in
            let open = try secrets(directory).create()
            try open.create(Secret(id: 1, note: "n", tag: "t"))
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "guess").create() }
            let second = try secrets(directory).create()
            #expect(try second.recover(Secret.self, id: 1)?.note == "n", "two databases share one environment")
            try second.create(Secret(id: 2, note: "m", tag: "t"))
            #expect(try open.count(Secret.self) == 2)
        }
    }

    @Test func refusesEmptyAndMissingPassphrases() throws {
        try withTemporaryDirectory { directory in
            expectError(.invalidConfiguration) { try secrets(directory, passphrase: "").create() }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
            _ = try secrets(directory).create()
            var plain = LMDBBuilder.unencrypted(databaseName: "Secrets", model: Model(entities: [Secret.self]))
            plain.directory = directory
            expectError(.wrongPassphrase) { try plain.create() }
        }
        try withTemporaryDirectory { directory in
            var plain = LMDBBuilder.unencrypted(databaseName: "Secrets", model: Model(entities: [Secret.self]))
            plain.directory = directory
            let db = try plain.create()
            #expect(!db.isEncrypted)
            expectError(.invalidConfiguration) { try secrets(directory).create() }
        }
    }

    /// Decision: passphrases are NFC-normalized, so composed and decomposed forms open the same store.
    @Test func treatsComposedAndDecomposedPassphrasesAsEqual() throws {
        try withTemporaryDirectory { directory in
            let composed = "Ĺaŧ\u{E9} café 🔐 пароль"
            let decomposed = "L\u{301}aŧe\u{301} cafe\u{301} 🔐 пароль"
            #expect(Array(composed.utf8) != Array(decomposed.utf8))
            do {
                let db = try secrets(directory, passphrase: composed).create()
                try db.create(Secret(id: 1, note: "unicode", tag: "t"))
            }
            let db = try secrets(directory, passphrase: decomposed).create()
            #expect(try db.recover(Secret.self, id: 1)?.note == "unicode")
            expectError(.wrongPassphrase) { try secrets(directory, passphrase: "Ĺaŧé café 🔐 пароль ").create() }
        }
    }

    @Test func refusesKeysOverLMDBsLimit() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder(databaseName: "Tags", passphrase: "p", entities: [LongKey.self])
            builder.directory = directory
            builder.keyDerivation = testKeyDerivation
            let db = try builder.create()
            try db.create(LongKey(id: String(repeating: "k", count: 510)))
            expectError(.keyTooLarge) { try db.create(LongKey(id: String(repeating: "k", count: 511))) }
            expectError(.keyTooLarge) { try db.recover(LongKey.self, id: String(repeating: "é", count: 300)) }
            #expect(try db.count(LongKey.self) == 1)
        }
    }
}

struct LongKey: Entity {
    var id: String
}
