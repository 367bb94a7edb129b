import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// What a migration block does on LMDB beyond the migration-block conformance checks (which every backend passes,
/// both LMDB configurations included): the records it leaves, a store another database of this process holds, and a
/// wrong passphrase.
@Suite struct MigrationBlockTests {
    static let count = 100

    func builder(
        _ directory: URL, _ model: Model, encrypted: Bool = true, block: MigrationBlock? = nil
    ) -> LMDBBuilder {
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "People", passphrase: "people", model: model)
            : LMDBBuilder.unencrypted(databaseName: "People", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        builder.migrationBlock = block
        return builder
    }

    func seedV1(_ directory: URL, encrypted: Bool = true) throws {
        let db = try builder(directory, BlockPeopleV1.model, encrypted: encrypted).create()
        try BlockPeopleV1.seed(db, count: Self.count)
        try db.close()
    }

    @Test func theRemovedAttributeLeavesTheStoredRecord() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory, encrypted: false)
            let db = try builder(directory, BlockPeopleV3.model, encrypted: false, block: BlockPeopleV3.migration)
                .create()
            let raw = try #require(try db.read { try $0.storedBytes(of: BlockPeopleV3.Person.self, id: 3) })
            let values = try StoredBytes.record(raw)
            #expect(values.count == 6, "one value per attribute of the new schema, no old values kept")
            #expect(raw.offset(of: Data("Main St".utf8)) != nil, "the merged address")
            #expect(raw.offset(of: Data("Ada3 Lovelace3".utf8)) == nil, "the split attribute is gone")
            #expect(try db.verify().entitiesChecked == 2, "the deleted entity's databases are gone")
        }
    }

    @Test func aStoreOpenInTheOldSchemaInThisProcessIsNotMigratedUnderIt() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let open = try builder(directory, BlockPeopleV1.model).create()
            expectError(.busy) {
                _ = try builder(directory, BlockPeopleV2.model) { _, _ in Issue.record("ran the block") }.create()
            }
            #expect(
                try open.count(BlockPeopleV1.Person.self) == Self.count, "the open database still reads its records")
        }
    }

    @Test func aWrongPassphraseFailsBeforeAnyMigrationWork() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let before = try Data(contentsOf: dataFile(directory, name: "People"))
            var wrong = builder(directory, BlockPeopleV3.model) { _, _ in Issue.record("ran the block") }
            wrong.passphrase = "not the passphrase"
            expectError(.wrongPassphrase) { _ = try wrong.create() }
            #expect(try Data(contentsOf: dataFile(directory, name: "People")) == before)
        }
    }
}
