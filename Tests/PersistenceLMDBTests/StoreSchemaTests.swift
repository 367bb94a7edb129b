import Foundation
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
}
