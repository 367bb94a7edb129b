import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Damage the read path can see is a typed `corrupt` error naming entity, index and primary key — never a record
/// quietly left out of an answer (a lookup that returns fewer records than the store holds, with no error). Each
/// test damages one entry on purpose, past the context's bookkeeping, on encrypted and unencrypted stores.
///
/// Seeded by ``VerificationTests/seeded(_:encrypted:)``: ten `Secret`s, note "note i" (unique), tag "t(i % 3)".
struct DamagedIndexTests {
    /// A `corrupt` error's message names the entity, the index and the primary key, and no stored value.
    static func expectNamesTheDamage(_ error: PersistenceError?, index: String, key: String) {
        let message = error?.message ?? ""
        #expect(message.contains("'Secret'"), "\(message)")
        #expect(message.contains("'\(index)'"), "\(message)")
        #expect(message.contains("primary key \(key)"), "\(message)")
        let values = ["note ", "t0", "t1"]
        #expect(!values.contains { message.contains($0) }, "no values: \(message)")
    }

    @Test(arguments: [true, false])
    func anEntryNamingNoRecordFailsTheLookup(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: encrypted)
            // Record 3 ("t0") is gone while its index entry stays: what a lost delete leaves.
            let deleted = try db.raw { transaction, store in try transaction.delete(store.dbi, key(3)) }
            #expect(deleted)
            let error = expectError(.corrupt) { try db.recover(Secret.self, where: Field("tag") == "t0") }
            Self.expectNamesTheDamage(error, index: "index_Secret_tag", key: "3")
            expectError(.corrupt) { try db.count(Secret.self, where: Field("tag") == "t0") }
            expectError(.corrupt) { try db.recover(Secret.self, where: Field("tag").in(["t0", "t2"])) }
            // A lookup the damaged entry isn't on still answers, and so does a scan.
            #expect(try db.recover(Secret.self, where: Field("tag") == "t1").map(\.id) == [1, 4, 7, 10])
            #expect(try db.count(Secret.self) == 9)
            // Through a unique index too.
            let unique = expectError(.corrupt) { try db.recover(Secret.self, where: Field("note") == "note 3") }
            Self.expectNamesTheDamage(unique, index: "unique_Secret_note", key: "3")
        }
    }

    @Test(arguments: [true, false])
    func anEntryFilingARecordUnderOtherValuesFailsTheLookup(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: encrypted)
            // Record 1 has tag "t1": file it under "t0" too, as a damaged index might.
            try db.raw { transaction, store in
                try transaction.put(store.index("tag").dbi, db.sealer.indexKey([.text("t0")]), key(1))
            }
            let error = expectError(.corrupt) { try db.recover(Secret.self, where: Field("tag") == "t0") }
            Self.expectNamesTheDamage(error, index: "index_Secret_tag", key: "1")
            // The index answered `tag == "t0"`: record 1 contradicts that part, whatever else the condition asks.
            expectError(.corrupt) {
                try db.recover(Secret.self, where: Field("tag") == "t0" && Field("note") == "note 3")
            }
        }
    }

    @Test(arguments: [true, false])
    func compoundConditionsStillLeaveOutWhatTheirOtherPartsRefuse(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: encrypted)
            // The index on tag answers the first part; the other part legitimately refuses records 3 and 9.
            let found = try db.recover(Secret.self, where: Field("tag") == "t0" && Field("note") == "note 6")
            #expect(found.map(\.id) == [6])
            #expect(try db.count(Secret.self, where: Field("tag") == "t0" && Field("note") != "note 6") == 2)
            #expect(try db.recover(Secret.self, where: Field("note").in(["note 2", "nothing"])).map(\.id) == [2])
        }
    }

    @Test(arguments: [true, false])
    func aUniqueEntryOfAnotherRecordIsDamageNotAViolation(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: encrypted)
            // "note 42" is filed under record 5, which holds "note 5".
            try db.raw { transaction, store in
                try transaction.put(store.index("note").dbi, db.sealer.indexKey([.text("note 42")]), key(5))
            }
            let error = expectError(.corrupt) { try db.create(Secret(id: 42, note: "note 42", tag: "t0")) }
            Self.expectNamesTheDamage(error, index: "unique_Secret_note", key: "5")
            #expect(try db.count(Secret.self) == 10, "nothing was written")
            // A real violation is still one.
            expectError(.uniqueViolation) { try db.create(Secret(id: 43, note: "note 5", tag: "t0")) }
        }
    }

    @Test(arguments: [true, false])
    func updatingOrDeletingARecordWhoseEntryIsMissingChangesNothing(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: encrypted)
            let deleted = try db.raw { transaction, store in
                // Record 7's unique entry names record 8 instead.
                try transaction.put(store.index("note").dbi, db.sealer.indexKey([.text("note 7")]), key(8))
                return try transaction.delete(store.index("tag").dbi, db.sealer.indexKey([.text("t1")]), value: key(4))
            }
            #expect(deleted)
            let update = expectError(.corrupt) { try db.update(Secret(id: 4, note: "note 4", tag: "t2")) }
            Self.expectNamesTheDamage(update, index: "index_Secret_tag", key: "4")
            expectError(.corrupt) { try db.delete(Secret.self, id: 4) }
            // Deleting record 7 would have removed record 8's entry under "note 7".
            let delete = expectError(.corrupt) { try db.delete(Secret.self, id: 7) }
            Self.expectNamesTheDamage(delete, index: "unique_Secret_note", key: "7")
            #expect(try db.recover(Secret.self, id: 4) == Secret(id: 4, note: "note 4", tag: "t1"))
            #expect(try db.count(Secret.self) == 10)
            // Records whose entries are sound still change.
            try db.update(Secret(id: 2, note: "note 2", tag: "t0"))
            #expect(try db.recover(Secret.self, where: Field("tag") == "t0").map(\.id) == [2, 3, 6, 9])
        }
    }

    @Test func aMissingNonceCounterIsDamageNotZero() throws {
        try withTemporaryDirectory { directory in
            let db = try VerificationTests.seeded(directory, encrypted: true)
            try db.raw { transaction, _ in try StoreMetadata.delete(.nonceCounter, db.metaDBI, transaction) }
            // Starting the counter again at 0 could reuse nonces under the store's key.
            let error = expectError(.corrupt) { try db.create(Secret(id: 11, note: "note 11", tag: "t2")) }
            #expect(error?.message.contains("nonceCounter") == true, "\(String(describing: error))")
            #expect(try db.count(Secret.self) == 10)
        }
    }

    @Test(arguments: [true, false])
    func aMissingSchemaVersionIsDamageAtOpen(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try VerificationTests.seeded(directory, encrypted: encrypted)
                try db.raw { transaction, _ in try StoreMetadata.delete(.schemaVersion, db.metaDBI, transaction) }
                try db.close()
            }
            var builder = LMDBBuilder.unencrypted(databaseName: "Secrets", entities: [Secret.self])
            builder.directory = directory
            let error = expectError(.corrupt) { try (encrypted ? secrets(directory) : builder).create() }
            #expect(error?.message.contains("no valid schema version") == true, "\(String(describing: error))")
        }
    }
}
