import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

struct TamperTests {
    static let distinctive = (0..<20).map { "plaintext-marker-\($0)-Zq7#xK" }

    @Test func storesNoPlaintextValues() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try secrets(directory).create()
                try db.create(
                    Self.distinctive.enumerated().map {
                        Secret(id: Int64($0.offset), note: $0.element, tag: "tag-\($0.element)")
                    })
                let found: [Secret] = try db.recover(key: "tag", value: "tag-\(Self.distinctive[3])")
                #expect(found.map(\.id) == [3], "index lookups still work on hashed keys")
            }
            let raw = try Data(contentsOf: dataFile(directory))
            for marker in Self.distinctive {
                #expect(raw.offset(of: Data(marker.utf8)) == nil, "the file holds '\(marker)' in plaintext")
                #expect(raw.offset(of: Data("tag-\(marker)".utf8)) == nil)
            }
            #expect(raw.offset(of: Data("plaintext-marker".utf8)) == nil)
        }
    }

    @Test func failsAuthenticationForEveryFlippedBitAndReadsTheRest() throws {
        try withTemporaryDirectory { directory in
            let records = (0..<8).map { Secret(id: Int64($0), note: "note \($0)", tag: "t") }
            var sealed: [Data] = []
            do {
                let db = try secrets(directory).create()
                try db.create(records)
                sealed = try db.read { context in
                    try records.map { try #require(try context.storedBytes(of: Secret.self, id: $0.id)) }
                }
            }
            let original = try Data(contentsOf: dataFile(directory))
            let offsets = try sealed.map { try #require(original.offset(of: $0)) }
            // Flip one bit at a different place in each even record: nonce, ciphertext, tag.
            for flip in 0..<3 {
                var tampered = original
                var flipped: Set<Int64> = []
                for (index, offset) in offsets.enumerated() where index % 2 == 0 {
                    let position = offset + (sealed[index].count - 1) * flip / 2
                    tampered[position] ^= UInt8(1 << ((index + flip) % 8))
                    flipped.insert(Int64(index))
                }
                try tampered.write(to: dataFile(directory))
                let db = try secrets(directory).create()
                for record in records {
                    if flipped.contains(record.id) {
                        expectError(.authenticationFailed) { try db.recover(Secret.self, id: record.id) }
                    } else {
                        #expect(try db.recover(Secret.self, id: record.id) == record)
                    }
                }
                expectError(.authenticationFailed) { let _: [Secret] = try db.recover() }
                // A scan testing a condition on the records' bytes opens each record as a whole read does.
                expectError(.authenticationFailed) { try db.recover(Secret.self, where: Field("note").contains("7")) }
            }
        }
    }

    @Test func aScanWithAConditionRefusesADamagedRecord() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Plain", model: Model(entities: [Secret.self]))
            builder.directory = directory
            let db = try builder.create()
            try db.create((0..<4).map { Secret(id: Int64($0), note: "note \($0)", tag: "t\($0)") })
            // Only what the condition reads is decoded to test it; the records it keeps are decoded whole.
            #expect(
                try db.recover(Secret.self, where: Field("note").contains("2")) == [
                    Secret(id: 2, note: "note 2", tag: "t2")
                ])
            #expect(try db.count(Secret.self, where: Field("tag").contains("t") && !Field("note").contains("3")) == 3)
            let damages = [
                StoredBytes.encodeRecord([.integer(1), .text("note 1")]),  // a record of another shape
                Data([3, 1, 0, 0]),  // an integer cut short
                Data([9]),  // more values than bytes
            ]
            for damage in damages {
                try db.write { try $0.overwriteStoredBytes(of: Secret.self, id: 1, with: damage) }
                expectError(.corrupt) { try db.recover(Secret.self, where: Field("note").contains("2")) }
                expectError(.corrupt) { try db.recover(Secret.self, where: Field("tag").contains("t")) }
            }
        }
    }

    @Test func failsAuthenticationForAValueMovedToAnotherKey() throws {
        try withTemporaryDirectory { directory in
            let db = try secrets(directory).create()
            try db.create([Secret(id: 1, note: "one", tag: "t"), Secret(id: 2, note: "two", tag: "t")])
            try db.write { context in
                let first = try #require(try context.storedBytes(of: Secret.self, id: 1))
                try context.overwriteStoredBytes(of: Secret.self, id: 2, with: first)
            }
            expectError(.authenticationFailed) { try db.recover(Secret.self, id: 2) }
            #expect(try db.recover(Secret.self, id: 1)?.note == "one")
        }
    }

    @Test func refusesAForeignFile() throws {
        try withTemporaryDirectory { directory in
            try Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: dataFile(directory))
            expectError(.corrupt) { try secrets(directory).create() }
        }
    }
}
