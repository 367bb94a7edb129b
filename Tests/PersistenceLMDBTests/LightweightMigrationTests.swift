import Foundation
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// A store written with an older schema version opens migrated, without user code, when the change allows it —
/// and is left as it was, with an error naming what blocks it, when it doesn't.
struct LightweightMigrationTests {
    struct ItemV1: Entity, Equatable {
        var id: Int64
        var name: String
        var legacy: String
        var tag: String?
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("legacy")]
    }

    struct ItemV2: Entity, Equatable {
        var id: Int64
        var name: String
        var tag: String
        var rank: Int
        var note: String?
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("rank"), .unique("name")]
        static let defaultValues: [String: Value] = ["rank": 7, "tag": "untagged"]
    }

    struct ItemNoDefault: Entity {
        var id: Int64
        var name: String
        var legacy: String
        var tag: String?
        var required: Int
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("legacy")]
    }

    struct ItemRetyped: Entity {
        var id: Int64
        var name: Int
        var legacy: String
        var tag: String?
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("legacy")]
    }

    struct ItemUniqueLegacy: Entity {
        var id: Int64
        var name: String
        var legacy: String
        var tag: String?
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.unique("tag")]
    }

    struct Gone: Entity {
        var id: Int64
        var secret: String
    }

    struct Added: Entity {
        var id: Int64
    }

    static let legacyMarker = "legacy-value-that-must-disappear"

    func builder(_ directory: URL, _ version: Int, _ entities: [any Entity.Type], encrypted: Bool) -> LMDBBuilder {
        let model = Model(version: version, entities: entities)
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "Migrating", passphrase: "migrate", model: model)
            : LMDBBuilder.unencrypted(databaseName: "Migrating", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        return builder
    }

    func seed(_ directory: URL, encrypted: Bool) throws {
        let db = try builder(directory, 1, [ItemV1.self, Gone.self], encrypted: encrypted).create()
        try db.write { context in
            for id in 1...300 {
                try context.create(
                    ItemV1(
                        id: Int64(id), name: "item \(id)", legacy: "\(Self.legacyMarker)-\(id)",
                        tag: id % 3 == 0 ? nil : "t\(id % 5)"))
            }
            try context.create(Gone(id: 1, secret: "gone"))
        }
    }

    @Test(arguments: [false, true])
    func migratesWithoutCode(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted)
            let db = try builder(directory, 2, [ItemV2.self, Added.self], encrypted: encrypted).create()
            let items: [ItemV2] = try db.recover()
            #expect(items.count == 300)
            #expect(items.first == ItemV2(id: 1, name: "item 1", tag: "t1", rank: 7, note: nil))
            #expect(try db.recover(ItemV2.self, id: 3)?.tag == "untagged", "a nil of a now-required attribute")
            #expect(try db.count(ItemV2.self, where: Field("rank") == 7) == 300, "the new index holds every record")
            #expect(try db.recover(ItemV2.self, key: "name", value: "item 42").map(\.id) == [42])
            try db.create(Added(id: 1))
            expectError(.uniqueViolation) { try db.create(ItemV2(id: 999, name: "item 5", tag: "x", rank: 1)) }
            let report = try db.verify()
            #expect(report.isSound, "\(report)")
            #expect(report.entitiesChecked == 2, "the removed entity's databases are gone")
            if !encrypted {
                // The record as stored: LMDB keeps freed pages until it reuses them, so the file may still hold the
                // old copy (sealed, in an encrypted store); the live record must not.
                let raw = try #require(try db.read { try $0.storedBytes(of: ItemV2.self, id: 1) })
                #expect(raw.offset(of: Data(Self.legacyMarker.utf8)) == nil, "the removed attribute left the record")
                #expect(try StoredBytes.record(raw).count == 5, "one value per attribute of the new schema")
            }
        }
    }

    @Test func aSchemaChangeWithoutAVersionBumpIsRefusedByName() throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: false)
            do {
                _ = try builder(directory, 1, [ItemV2.self, Added.self], encrypted: false).create()
                Issue.record("opened a changed schema at the same version")
            } catch let error as PersistenceError {
                #expect(error.code == .migrationRequired)
                #expect(error.message.contains("'Item.rank' added") && error.message.contains("bump"), "\(error)")
                #expect(!error.message.contains(Self.legacyMarker))
            }
            #expect(
                try builder(directory, 1, [ItemV1.self, Gone.self], encrypted: false).create().count(ItemV1.self) == 300
            )
        }
    }

    @Test(arguments: [
        (ItemNoDefault.self as any Entity.Type, "'Item.required'"), (ItemRetyped.self, "'Item.name' changed type"),
        (ItemUniqueLegacy.self, "unique index"),
    ])
    func aBlockedMigrationChangesNothing(type: any Entity.Type, named: String) throws {
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: true)
            let before = try Data(contentsOf: directory.appendingPathComponent("Migrating.lmdb"))
            do {
                _ = try builder(directory, 2, [type, Gone.self], encrypted: true).create()
                Issue.record("migrated a blocked change")
            } catch let error as PersistenceError {
                // What no code could do is required before any change; data breaking a unique index fails.
                #expect(error.code == (named == "unique index" ? .migrationFailed : .migrationRequired), "\(error)")
                #expect(error.message.contains(named), "\(error)")
            }
            let db = try builder(directory, 1, [ItemV1.self, Gone.self], encrypted: true).create()
            #expect(try db.count(ItemV1.self) == 300)
            #expect(try db.recover(Gone.self, id: 1)?.secret == "gone")
            #expect(try db.verify().isSound)
            if named != "unique index" {
                let after = try Data(contentsOf: directory.appendingPathComponent("Migrating.lmdb"))
                #expect(after == before, "refused before any write")
            }
        }
    }

    struct MemoV1: Entity {
        var id: Int64
        var note: String?
        static var entityName: String { "Memo" }
    }

    struct MemoV2: Entity, Equatable {
        var id: Int64
        var note: String?
        var pinned: Bool
        static var entityName: String { "Memo" }
        static let defaultValues: [String: Value] = ["note": "(none)", "pinned": false]
    }

    @Test func aDefaultFillsAddedAttributesButNeverAStoredNil() throws {
        try withTemporaryDirectory { directory in
            let v1 = builder(directory, 1, [MemoV1.self], encrypted: false)
            try v1.create().create([MemoV1(id: 1, note: nil), MemoV1(id: 2, note: "kept")])
            let db = try builder(directory, 2, [MemoV2.self], encrypted: false).create()
            #expect(
                try db.recover() == [
                    MemoV2(id: 1, note: nil, pinned: false), MemoV2(id: 2, note: "kept", pinned: false),
                ])
        }
    }
}
