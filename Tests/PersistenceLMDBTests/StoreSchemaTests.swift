import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

struct StoreSchemaTests {
    struct SecretV2: Entity {
        var id: Int64
        var note: String
        var tag: String
        var extra: Bool
        static var entityName: String { "Secret" }
    }

    @Test func refusesANewerFormat() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try secrets(directory).create()
                try db.environment.writer.withLock {
                    try db.environment.write { transaction in
                        let meta = try db.environment.database(named: StoreMetadata.databaseName)
                        try StoreMetadata.writeNumber(.format, StoreMetadata.formatVersion + 1, meta, transaction)
                    }
                }
            }
            expectError(.unsupportedFormatVersion) { try secrets(directory).create() }
        }
    }

    @Test func refusesAChangedSchemaAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try secrets(directory).create()
                try db.create(Secret(id: 1, note: "kept", tag: "t"))
            }
            var changed = LMDBBuilder(
                databaseName: "Secrets", passphrase: "correct horse battery staple", entities: [SecretV2.self])
            changed.directory = directory
            changed.keyDerivation = testKeyDerivation
            do {
                _ = try changed.create()
                Issue.record("a changed model must not open")
            } catch let error as PersistenceError {
                #expect(error.code == .migrationRequired)
                #expect(error.message.contains("'Secret.extra' added"))
            }
            #expect(try secrets(directory).create().recover(Secret.self, id: 1)?.note == "kept")
        }
    }

    @Test func recordsTheSchemaVersionAndRefusesAnOlderOne() throws {
        try withTemporaryDirectory { directory in
            var newer = secrets(directory)
            newer.schemaVersion = 3
            _ = try newer.create()
            var older = secrets(directory)
            older.schemaVersion = 2
            expectError(.invalidConfiguration) { try older.create() }
            var newest = secrets(directory)
            newest.schemaVersion = 4
            _ = try newest.create()
            expectError(.invalidConfiguration) { try newer.create() }
        }
    }

    @Test func oneSchemaVersionIsTheModelVersion() throws {
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            #expect(builder.schemaVersion == 1 && builder.model.version == 1, "one number, 1 by default")
            builder.schemaVersion = 5
            #expect(builder.model.version == 5)
            builder.model.version = 6
            #expect(builder.schemaVersion == 6)
            let explicit = LMDBBuilder(
                databaseName: "X", passphrase: "p", model: Model(version: 2, entities: [Secret.self]), schemaVersion: 7)
            #expect(explicit.model.version == 7, "a schema version given to init wins over the model's")
            _ = try builder.create()
            var older = secrets(directory)
            older.model.version = 5
            expectError(.invalidConfiguration) { try older.create() }
            var negative = secrets(directory)
            negative.model.version = -1
            expectError(.invalidConfiguration) { try negative.create() }
        }
    }

    @Test func aStoreWrittenWithTheOldDefaultVersionZeroStillOpens() throws {
        try withTemporaryDirectory { directory in
            var old = secrets(directory)
            old.schemaVersion = 0  // what `schemaVersion: 0`, the former default, wrote
            _ = try old.create().create(Secret(id: 1, note: "n", tag: "t"))
            let reopened = try secrets(directory).create()
            #expect(try reopened.recover(Secret.self, id: 1)?.note == "n")
        }
    }
}
