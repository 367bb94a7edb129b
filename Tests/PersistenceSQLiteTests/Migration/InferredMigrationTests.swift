import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// Each lightweight rule: what a step without a mapping model does alone, and what it refuses.
struct InferredMigrationTests {
    // Version 1 of one entity, and the versions each rule makes of it.
    struct Item: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static let indexes: [Index] = [.on("name")]
    }

    /// Writes version 1 (three items, one `nil` note), then opens version 2 with `model`.
    private func migrate(
        _ directory: URL, to entities: [any Entity.Type], previous: [any Entity.Type] = [Item.self]
    ) throws -> SQLiteDatabase {
        var v1 = SQLiteBuilder(databaseName: "Items", model: Model(version: 1, entities: previous))
        v1.directory = directory
        do {
            let db = try v1.create()
            if previous.contains(where: { $0 == Item.self }) {
                try db.create([
                    Item(id: 1, name: "one", note: "n1", count: 10, flag: true),
                    Item(id: 2, name: "two", note: nil, count: 20, flag: false),
                    Item(id: 3, name: "three", note: "n3", count: 30, flag: true),
                ])
            }
        }
        var v2 = SQLiteBuilder(databaseName: "Items", model: Model(version: 2, entities: entities))
        v2.directory = directory
        let db = try v2.create()
        #expect(try db.verify().isSound)
        return db
    }

    struct AddedAttributes: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        var added: String?
        var score: Int
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
        static let defaultValues: [String: Value] = ["score": 5]
    }

    @Test func addsAttributesWithTheirDefaults() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [AddedAttributes.self])
            let items = try db.recover(AddedAttributes.self)
            #expect(items.map(\.score) == [5, 5, 5])
            #expect(items.map(\.added) == [nil, nil, nil])
            #expect(items.map(\.note) == ["n1", nil, "n3"])
            #expect(db.migrationReport?.steps.first?.kind == .inferred)
        }
    }

    struct RemovedAttribute: Entity, Equatable {
        var id: Int64
        var name: String
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    @Test func removesAttributes() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [RemovedAttribute.self])
            #expect(try db.recover(RemovedAttribute.self).map(\.name) == ["one", "two", "three"])
            let columns = try db.read { try $0.rows("SELECT name FROM pragma_table_info('Item')") }
            #expect(!columns.contains { $0["name"] == .text("note") }, "the removed column is gone from the table")
        }
    }

    struct RenamedAttribute: Entity, Equatable {
        var id: Int64
        var title: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("title")]
        static let previousAttributeNames = ["title": "name"]
    }

    @Test func renamesAnAttributeByItsRenamingIdentifier() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [RenamedAttribute.self])
            #expect(try db.recover(RenamedAttribute.self).map(\.title) == ["one", "two", "three"])
            #expect(try db.count(RenamedAttribute.self, where: Field("title") == "two") == 1)
            #expect(db.migrationReport?.changes.contains("1 → 2: 'Item.name' renamed 'title'") == true)
        }
    }

    struct RenamedEntity: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Thing" }
        static let indexes: [Index] = [.on("name")]
        static let previousName = "Item"
    }

    @Test func renamesAnEntityByItsRenamingIdentifier() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [RenamedEntity.self])
            #expect(try db.recover(RenamedEntity.self).map(\.name) == ["one", "two", "three"])
            let tables = try db.read { try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'table'") }
            #expect(!tables.contains { $0["name"] == .text("Item") })
        }
    }

    struct Other: Entity, Equatable {
        var id: String
        var value: Double
    }

    @Test func addsAndRemovesEntities() throws {
        try withTemporaryDirectory { directory in
            let added = try migrate(directory, to: [Item.self, Other.self])
            #expect(try added.count(Other.self) == 0)
            #expect(try added.count(Item.self) == 3)
            try added.create(Other(id: "a", value: 1))
        }
        try withTemporaryDirectory { directory in
            let removed = try migrate(directory, to: [Other.self])
            let tables = try removed.read { try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'table'") }
            #expect(!tables.contains { $0["name"] == .text("Item") })
        }
    }

    struct NowRequired: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
        static let defaultValues: [String: Value] = ["note": "none"]
    }

    @Test func optionalBecomesRequiredWithADefaultForNil() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [NowRequired.self])
            #expect(try db.recover(NowRequired.self).map(\.note) == ["n1", "none", "n3"])
            expectError(.constraintViolation) {
                try db.write { try $0.execute("UPDATE \"Item\" SET \"note\" = NULL WHERE \"id\" = 1") }
            }
        }
    }

    struct Indexed: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.unique("name"), .on("count", "flag")]
    }

    @Test func changesIndexesAndUniqueConstraints() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [Indexed.self])
            let indexes = try db.read {
                try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            }
            #expect(indexes.compactMap { $0["name"] } == [.text("index_Item_count_flag"), .text("unique_Item_name")])
            expectError(.uniqueViolation) { try db.create(Indexed(id: 9, name: "one", count: 1, flag: true)) }
            #expect(db.migrationReport?.steps.first?.entities.first?.recordsRewritten == 0, "the table is kept")
        }
    }

    @Test func aUniqueConstraintTheDataBreaksFailsWithNothingChanged() throws {
        try withTemporaryDirectory { directory in
            var v1 = SQLiteBuilder(databaseName: "Items", model: Model(version: 1, entities: [Item.self]))
            v1.directory = directory
            do {
                try v1.create().create([
                    Item(id: 1, name: "same", count: 1, flag: true), Item(id: 2, name: "same", count: 2, flag: true),
                ])
            }
            let before = try storeBytes(directory, "Items")
            var v2 = SQLiteBuilder(databaseName: "Items", model: Model(version: 2, entities: [Indexed.self]))
            v2.directory = directory
            let error = expectError(.migrationFailed) { try v2.create() }
            #expect((error?.underlyingError as? PersistenceError)?.code == .uniqueViolation)
            #expect(try storeBytes(directory, "Items") == before)
        }
    }

    struct Widened: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Double
        var flag: Int
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    @Test func widensIntegersToDoublesAndBoolsToIntegers() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [Widened.self])
            let items = try db.recover(Widened.self)
            #expect(items.map(\.count) == [10, 20, 30])
            #expect(items.map(\.flag) == [1, 0, 1])
            let stored = try db.read { try $0.scalar("SELECT typeof(\"count\") FROM \"Item\" WHERE \"id\" = 1") }
            #expect(stored == .text("real"))
        }
    }

    struct Int64Count: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int64
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    @Test func int32ToInt64IsNoSchemaChange() throws {
        try withTemporaryDirectory { directory in
            let db = try migrate(directory, to: [Int64Count.self])
            #expect(try db.recover(Int64Count.self).map(\.count) == [10, 20, 30])
            #expect(db.migrationReport == nil, "only the version changed")
        }
    }

    struct Narrowed: Entity, Equatable {
        var id: Int64
        var name: Int
        var note: String?
        var count: Int32
        var flag: Bool
        var required: String
        static var entityName: String { "Item" }
    }

    @Test func whatCantBeInferredIsNamedBeforeAnyChange() throws {
        try withTemporaryDirectory { directory in
            var v1 = SQLiteBuilder(databaseName: "Items", model: Model(version: 1, entities: [Item.self]))
            v1.directory = directory
            try v1.create().create(Item(id: 1, name: "secret-value", count: 1, flag: true))
            let before = try storeBytes(directory, "Items")
            var v2 = SQLiteBuilder(databaseName: "Items", model: Model(version: 2, entities: [Narrowed.self]))
            v2.directory = directory
            let error = try #require(expectError(.migrationRequired) { try v2.create() })
            #expect(error.message.contains("migration step 1 → 2"), "\(error)")
            #expect(error.message.contains("'Item.name' changed type from string to integer"), "\(error)")
            #expect(error.message.contains("'Item.required' is added, not optional, and has no default"), "\(error)")
            #expect(!error.message.contains("secret-value"))
            #expect(try storeBytes(directory, "Items") == before)
        }
    }
}
