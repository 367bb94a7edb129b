import Foundation
import PersistenceCore
import Testing

/// Each lightweight rule: what a step without a mapping model does alone, and what it refuses.
enum InferredMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("inferred: adds attributes with their defaults") { try addsAttributes($0) },
        MigrationConformanceCheck("inferred: removes attributes") { try removesAttributes($0) },
        MigrationConformanceCheck("inferred: renames an attribute by its renaming identifier") {
            try renamesAttribute($0)
        },
        MigrationConformanceCheck("inferred: renames an entity by its renaming identifier") {
            try renamesEntity($0)
        },
        MigrationConformanceCheck("inferred: aliases follow an entity renamed by its renaming identifier") {
            try aliasesFollowARenamedEntity($0)
        },
        MigrationConformanceCheck("inferred: swaps two attributes' names while renaming the entity") {
            try swapsNames($0)
        },
        MigrationConformanceCheck("inferred: adds and removes entities") { try addsAndRemovesEntities($0) },
        MigrationConformanceCheck("inferred: an optional attribute becomes required, a default filling nil") {
            try becomesRequired($0)
        },
        MigrationConformanceCheck("inferred: required attributes become optional") { try becomesOptional($0) },
        MigrationConformanceCheck("inferred: changes indexes and unique constraints") { try changesIndexes($0) },
        MigrationConformanceCheck("inferred: a unique constraint the data breaks fails with nothing changed") {
            try uniqueBrokenByData($0)
        },
        MigrationConformanceCheck("inferred: widens integers to doubles and booleans to integers") {
            try widens($0)
        },
        MigrationConformanceCheck("inferred: Int32 to Int64 is no schema change") { try int32ToInt64($0) },
        MigrationConformanceCheck("inferred: what can't be inferred is named before any change") {
            try refusesWhatCantBeInferred($0)
        },
        MigrationConformanceCheck("inferred: every attribute type comes through bit for bit") {
            try everyTypeSurvives($0)
        },
        MigrationConformanceCheck("inferred: a migrated store opens again without migrating") {
            try opensAgainWithoutMigrating($0)
        },
    ]

    /// Writes version 1 of the items (three, one `nil` note), then opens version 2 with `entities`.
    static func migrate(
        _ stores: MigrationStores, to entities: [any Entity.Type], previous: [any Entity.Type] = [ItemV1.Item.self]
    ) throws -> OpenedStore {
        try stores.seed("Items", Model(version: 1, entities: previous)) { db in
            if previous.contains(where: { $0 == ItemV1.Item.self }) { try db.create(ItemV1.items) }
        }
        let opened = try stores.open("Items", Model(version: 2, entities: entities))
        #expect(try opened.database.verify().isSound)
        return opened
    }

    static func addsAttributes(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.AddedAttributes.self])
        let items = try opened.database.recover(ItemV2.AddedAttributes.self)
        #expect(items.map(\.score) == [5, 5, 5])
        #expect(items.map(\.added) == [nil, nil, nil])
        #expect(items.map(\.note) == ["n1", nil, "n3"])
        #expect(items.map(\.name) == ["one", "two", "three"])
        #expect(opened.report?.steps.first?.kind == .inferred)
        // New records use the new attributes.
        try opened.database.create(
            ItemV2.AddedAttributes(id: 4, name: "four", note: nil, count: 1, flag: false, added: "a", score: 9))
        #expect(try opened.database.count(ItemV2.AddedAttributes.self, where: Field("score") == 9) == 1)
    }

    static func removesAttributes(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.RemovedAttribute.self])
        #expect(
            try opened.database.recover(ItemV2.RemovedAttribute.self) == [
                .init(id: 1, name: "one", count: 10, flag: true), .init(id: 2, name: "two", count: 20, flag: false),
                .init(id: 3, name: "three", count: 30, flag: true),
            ])
        #expect(
            opened.report?.changes.contains("1 → 2: 'Item.note' removed") == true,
            "\(String(describing: opened.report))")
    }

    static func renamesAttribute(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.RenamedAttribute.self])
        #expect(try opened.database.recover(ItemV2.RenamedAttribute.self).map(\.title) == ["one", "two", "three"])
        #expect(try opened.database.count(ItemV2.RenamedAttribute.self, where: Field("title") == "two") == 1)
        #expect(opened.report?.changes.contains("1 → 2: 'Item.name' renamed 'title'") == true)
        #expect(try opened.indexNames() == ["index_Item_title"])
    }

    static func renamesEntity(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.RenamedEntity.self])
        #expect(try opened.database.recover(ItemV2.RenamedEntity.self).map(\.name) == ["one", "two", "three"])
        let tables = try opened.tableNames()
        #expect(tables.contains("Thing") && !tables.contains("Item"), "\(tables)")
        #expect(try opened.indexNames() == ["index_Thing_name"])
        #expect(opened.report?.changes.contains("1 → 2: entity 'Item' renamed 'Thing'") == true)
    }

    static func aliasesFollowARenamedEntity(_ stores: MigrationStores) throws {
        try ItemV1.seedWithAliases(stores)
        let opened = try stores.open("Items", Model(version: 2, entities: [ItemV2.RenamedEntity.self]))
        let (favourite, top) = try ItemV2.RenamedEntity.aliases(in: opened.database)
        #expect(favourite?.name == "two")
        #expect(top.map(\.id) == [3, 1])
        #expect(try opened.database.verify().isSound)
    }

    static func swapsNames(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.Swapped.self])
        // `name` (required) becomes `note`, `note` (optional, nil for item 2) becomes `name`.
        #expect(try opened.database.count(ItemV2.Swapped.self) == 3)
        #expect(
            try opened.database.recover(ItemV2.Swapped.self, id: 1)
                == ItemV2.Swapped(id: 1, note: "one", name: "n1", count: 10, flag: true))
        #expect(
            try opened.database.recover(ItemV2.Swapped.self, id: 2)
                == ItemV2.Swapped(id: 2, note: "two", name: nil, count: 20, flag: false))
        #expect(try opened.database.count(ItemV2.Swapped.self, where: Field("note") == "three") == 1)
        #expect(try opened.indexNames() == ["index_Swapped_note"])
    }

    static func addsAndRemovesEntities(_ stores: MigrationStores) throws {
        do {
            let added = try migrate(stores, to: [ItemV1.Item.self, ItemV2.Other.self])
            #expect(try added.database.count(ItemV2.Other.self) == 0)
            #expect(try added.database.count(ItemV1.Item.self) == 3)
            try added.database.create(ItemV2.Other(id: "a", value: 1))
            #expect(try added.database.recover(ItemV2.Other.self) == [ItemV2.Other(id: "a", value: 1)])
            try added.database.close()
        }
        let removed = try stores.open(
            "Items", Model(version: 3, entities: [ItemV2.Other.self]),
            plan: MigrationPlan(models: [Model(version: 2, entities: [ItemV1.Item.self, ItemV2.Other.self])]))
        #expect(try removed.database.count(ItemV2.Other.self) == 1)
        let tables = try removed.tableNames()
        #expect(!tables.contains("Item") && tables.contains("Other"), "\(tables)")
        #expect(try removed.indexNames().isEmpty)
    }

    static func becomesRequired(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.NowRequired.self])
        #expect(try opened.database.recover(ItemV2.NowRequired.self).map(\.note) == ["n1", "none", "n3"])
        #expect(try opened.database.count(ItemV2.NowRequired.self, where: Field("note") == "none") == 1)
    }

    static func becomesOptional(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.NowOptional.self])
        #expect(try opened.database.recover(ItemV2.NowOptional.self).map(\.count) == [10, 20, 30])
        try opened.database.create(ItemV2.NowOptional(id: 4, name: nil, note: nil, count: nil, flag: true))
        #expect(
            try opened.database.recover(ItemV2.NowOptional.self, id: 4)
                == ItemV2.NowOptional(id: 4, name: nil, note: nil, count: nil, flag: true))
        #expect(try opened.database.count(ItemV2.NowOptional.self, where: Field("name").isNull) == 1)
    }

    static func changesIndexes(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.Indexed.self])
        #expect(try opened.indexNames() == ["index_Item_count_flag", "unique_Item_name"])
        expectError(.uniqueViolation) {
            try opened.database.create(ItemV2.Indexed(id: 9, name: "one", count: 1, flag: true))
        }
        #expect(try opened.database.count(ItemV2.Indexed.self) == 3, "the refused record changed nothing")
        #expect(try opened.database.count(ItemV2.Indexed.self, where: Field("count") == 20) == 1)
    }

    static func uniqueBrokenByData(_ stores: MigrationStores) throws {
        try stores.seed("Items", Model(version: 1, entities: [ItemV1.Item.self])) { db in
            try db.create([
                ItemV1.Item(id: 1, name: "same", count: 1, flag: true),
                ItemV1.Item(id: 2, name: "same", count: 2, flag: true),
            ])
        }
        let before = try stores.fingerprint("Items")
        let error = expectError(.migrationFailed) {
            try stores.open("Items", Model(version: 2, entities: [ItemV2.Indexed.self]))
        }
        #expect((error?.underlyingError as? PersistenceError)?.code == .uniqueViolation, "\(String(describing: error))")
        #expect(try stores.fingerprint("Items") == before)
    }

    static func widens(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.Widened.self])
        let items = try opened.database.recover(ItemV2.Widened.self)
        #expect(items.map(\.count) == [10, 20, 30])
        #expect(items.map(\.flag) == [1, 0, 1])
        try opened.database.create(ItemV2.Widened(id: 4, name: "four", note: nil, count: 2.5, flag: 7))
        #expect(try opened.database.count(ItemV2.Widened.self, where: Field("count") > 2.25) == 4)
        #expect(try opened.database.recover(ItemV2.Widened.self, id: 4)?.count == 2.5)
    }

    static func int32ToInt64(_ stores: MigrationStores) throws {
        let opened = try migrate(stores, to: [ItemV2.Int64Count.self])
        #expect(try opened.database.recover(ItemV2.Int64Count.self).map(\.count) == [10, 20, 30])
        #expect(opened.report == nil, "only the version changed")
        try opened.database.create(
            ItemV2.Int64Count(id: 4, name: "big", note: nil, count: Int64(Int32.max) + 1, flag: true))
        #expect(try opened.database.recover(ItemV2.Int64Count.self, id: 4)?.count == Int64(Int32.max) + 1)
    }

    static func refusesWhatCantBeInferred(_ stores: MigrationStores) throws {
        try stores.seed("Items", Model(version: 1, entities: [ItemV1.Item.self])) { db in
            try db.create(ItemV1.Item(id: 1, name: "secret-value", count: 1, flag: true))
        }
        let before = try stores.fingerprint("Items")
        let v2 = Model(version: 2, entities: [ItemV2.Narrowed.self])
        let error = expectError(.migrationRequired) { try stores.open("Items", v2) }
        let message = error?.message ?? ""
        #expect(message.contains("migration step 1 → 2"), "\(message)")
        #expect(message.contains("'Item.name' changed type from string to integer"), "\(message)")
        #expect(message.contains("'Item.required' is added, not optional, and has no default"), "\(message)")
        #expect(!message.contains("secret-value"))
        expectError(.migrationRequired) { try stores.dryRun("Items", v2, plan: nil) }
        #expect(try stores.fingerprint("Items") == before)
    }

    static func everyTypeSurvives(_ stores: MigrationStores) throws {
        var full = AllTypes.filled(id: 1)
        full.optionalAddress = AllTypes.Address(street: "Side \u{0}'\"", numbers: [])
        var extreme = AllTypes.sample(id: Int64.min)
        extreme.int = Int.min
        extreme.int64 = Int64.max
        extreme.uint64 = UInt64(Int64.max)
        extreme.double = -.greatestFiniteMagnitude
        extreme.float = .leastNonzeroMagnitude
        extreme.string = "é\u{0}🙂"
        extreme.data = Data()
        let values = [full, extreme, AllTypes.sample(id: 2)]
        try stores.seed("Types", Model(version: 1, entities: [AllTypes.self])) { db in try db.create(values) }
        let opened = try stores.open("Types", Model(version: 2, entities: [EveryTypeV2.AllTypes.self]))
        #expect(opened.report?.steps.first?.kind == .inferred)
        let migrated = try opened.database.recover(EveryTypeV2.AllTypes.self)
        #expect(migrated == values.sorted { $0.id < $1.id }.map(EveryTypeV2.AllTypes.init))
        #expect(try opened.database.count(EveryTypeV2.AllTypes.self, where: Field("text") == "é\u{0}🙂") == 1)
        #expect(try opened.database.verify().isSound)
    }

    static func opensAgainWithoutMigrating(_ stores: MigrationStores) throws {
        do {
            let opened = try migrate(stores, to: [ItemV2.AddedAttributes.self])
            #expect(opened.report != nil)
            try opened.database.close()
        }
        let progress = CallCounter()
        let again = try stores.open(
            "Items", Model(version: 2, entities: [ItemV2.AddedAttributes.self]),
            plan: MigrationPlan(models: [Model(version: 1, entities: [ItemV1.Item.self])]),
            progress: { _ in progress.increment() })
        #expect(again.report == nil)
        #expect(progress.count == 0)
        #expect(try again.database.count(ItemV2.AddedAttributes.self) == 3)
        // The old model is refused now: the store is newer.
        try again.database.close()
        expectError(.invalidConfiguration) { try stores.open("Items", Model(version: 1, entities: [ItemV1.Item.self])) }
    }
}
