import Foundation
import PersistenceCore
import Testing

/// A store of each shipped version opened by the current one: every step of the chain, inferred or mapped, in one
/// start-up; and the plans and stores a chain refuses before touching anything.
enum ChainedMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("chained: a version 1 store runs three steps, inferred, mapped, inferred") {
            try fromVersion1($0)
        },
        MigrationConformanceCheck("chained: a version 2 store runs the last two steps") { try fromVersion2($0) },
        MigrationConformanceCheck("chained: a version 3 store runs the last step") { try fromVersion3($0) },
        MigrationConformanceCheck("chained: a store of the current version opens without migrating") {
            try currentVersion($0)
        },
        MigrationConformanceCheck("chained: a step that can't be inferred without a mapping is refused first") {
            try refusedStep($0)
        },
        MigrationConformanceCheck("chained: plan mistakes are refused before any store is made") {
            try planMistakes($0)
        },
        MigrationConformanceCheck("chained: a store that is not the version it says is refused") {
            try wrongVersion($0)
        },
    ]

    static let name = "People"
    static let expected: [PeopleV4.Person] = [
        PeopleV4.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 0),
        PeopleV4.Person(id: 2, fullName: "Alan", age: 41, email: "alan@example.com", active: true, city: nil, rank: 0),
    ]

    static func fromVersion1(_ stores: MigrationStores) throws {
        try stores.seed(name, PeopleV1.model) { db in
            try db.create(PeopleV1.Person(id: 1, name: "Ada", age: "36", email: nil))
            try db.create(PeopleV1.Person(id: 2, name: "Alan", age: "41", email: "alan@example.com"))
            try db.create(PeopleV1.Address(id: 10, personID: 1, city: "London"))
        }
        let opened = try stores.open(name, PeopleV4.model, plan: PeopleV4.plan)
        let db = opened.database
        #expect(try db.recover(PeopleV4.Person.self) == expected)
        #expect(try db.count(PeopleV4.Label.self) == 0)
        let report = try #require(opened.report)
        #expect(report.steps.map(\.kind) == [.inferred, .mapped, .inferred])
        #expect(report.steps.map(\.fromVersion) == [1, 2, 3])
        #expect(report.steps[0].changes.contains("'Person.name' renamed 'fullName'"), "\(report)")
        #expect(report.steps[2].changes.contains("entity 'Tag' renamed 'Label'"), "\(report)")
        #expect(try db.verify().isSound)
        // The indexes of the last version, through the queries that use them.
        #expect(try db.count(PeopleV4.Person.self, where: Field("age") == 41) == 1)
        #expect(try db.count(PeopleV4.Person.self, where: Field("fullName") == "Ada") == 1)
        #expect(try opened.indexNames() == ["index_Person_age", "index_Person_fullName"])
        let tables = try opened.tableNames()
        for table in ["Label", "Person"] { #expect(tables.contains(table), "\(tables)") }
        for table in ["Address", "Tag"] { #expect(!tables.contains(table), "\(tables)") }
        #expect(tables.allSatisfy { ["Label", "Person"].contains($0) || $0.hasPrefix("persistence_") }, "\(tables)")
    }

    static func fromVersion2(_ stores: MigrationStores) throws {
        try stores.seed(name, PeopleV2.model) { db in
            try db.create(PeopleV2.Person(id: 1, fullName: "Ada", age: "36", email: nil, active: true))
            try db.create(PeopleV2.Person(id: 2, fullName: "Alan", age: "41", email: "alan@example.com", active: true))
            try db.create(PeopleV2.Address(id: 10, personID: 1, city: "London"))
            try db.create(PeopleV2.Tag(id: 5, label: "friends"))
        }
        let opened = try stores.open(name, PeopleV4.model, plan: PeopleV4.plan)
        #expect(try opened.database.recover(PeopleV4.Person.self) == expected)
        #expect(try opened.database.recover(PeopleV4.Label.self) == [PeopleV4.Label(id: 5, label: "friends")])
        #expect(opened.report?.steps.map(\.kind) == [.mapped, .inferred])
    }

    static func fromVersion3(_ stores: MigrationStores) throws {
        try stores.seed(name, PeopleV3.model) { db in
            try db.create(
                PeopleV3.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 7))
            try db.create(PeopleV3.Tag(id: 5, label: "friends"))
        }
        let opened = try stores.open(name, PeopleV4.model, plan: PeopleV4.plan)
        #expect(
            try opened.database.recover(PeopleV4.Person.self)
                == [PeopleV4.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 7)])
        #expect(try opened.database.recover(PeopleV4.Label.self) == [PeopleV4.Label(id: 5, label: "friends")])
        #expect(opened.report?.steps.map(\.kind) == [.inferred])
        #expect(try opened.database.count(PeopleV4.Person.self, where: Field("rank") > 6.5) == 1)
    }

    static func currentVersion(_ stores: MigrationStores) throws {
        try stores.seed(name, PeopleV4.model) { db in try db.create(PeopleV4.Label(id: 1, label: "x")) }
        let before = try stores.fingerprint(name)
        let progress = CallCounter()
        do {
            let opened = try stores.open(
                name, PeopleV4.model, plan: PeopleV4.plan, progress: { _ in progress.increment() })
            #expect(opened.report == nil)
            #expect(try stores.dryRun(name, PeopleV4.model, plan: PeopleV4.plan) == nil)
            try opened.database.close()
        }
        #expect(progress.count == 0)
        #expect(try stores.fingerprint(name) == before)
    }

    static func refusedStep(_ stores: MigrationStores) throws {
        try stores.seed(name, PeopleV1.model) { db in
            try db.create(PeopleV1.Person(id: 1, name: "Ada", age: "36", email: nil))
        }
        let before = try stores.fingerprint(name)
        // Without the 2 → 3 mapping model, age text → integer can't be inferred.
        let error = expectError(.migrationRequired) {
            try stores.open(
                name, PeopleV4.model, plan: MigrationPlan(models: [PeopleV1.model, PeopleV2.model, PeopleV3.model]))
        }
        let message = error?.message ?? ""
        #expect(message.contains("migration step 2 → 3"), "\(message)")
        #expect(message.contains("'Person.age' changed type from string to integer"), "\(message)")
        #expect(!message.contains("36"), "no stored value in the message")
        #expect(try stores.fingerprint(name) == before)
        // The store still opens as version 1.
        let old = try stores.open(name, PeopleV1.model)
        #expect(try old.database.count(PeopleV1.Person.self) == 1)
    }

    static func planMistakes(_ stores: MigrationStores) throws {
        let outOfOrder = MigrationPlan(models: [PeopleV2.model, PeopleV1.model])
        expectError(.invalidConfiguration) { try stores.open(name, PeopleV4.model, plan: outOfOrder) }
        let skipping = MigrationPlan(
            models: [PeopleV1.model, PeopleV2.model, PeopleV3.model], mappings: [MappingModel(from: 1, to: 3, [])])
        expectError(.invalidConfiguration) { try stores.open(name, PeopleV4.model, plan: skipping) }
        let twice = MigrationPlan(
            models: [PeopleV1.model, PeopleV2.model, PeopleV3.model],
            mappings: [PeopleV4.mapping2to3, PeopleV4.mapping2to3])
        expectError(.invalidConfiguration) { try stores.open(name, PeopleV4.model, plan: twice) }
        #expect(try stores.storeNames().isEmpty)
        if stores.backend.storesAreFiles {
            #expect(try FileManager.default.contentsOfDirectory(atPath: stores.directory.path).isEmpty)
        }
    }

    static func wrongVersion(_ stores: MigrationStores) throws {
        // Version 2's number, version 1's schema: the plan doesn't describe this store.
        try stores.seed(name, Model(version: 2, entities: [PeopleV1.Person.self])) { db in
            try db.create(PeopleV1.Person(id: 1, name: "Ada", age: "36", email: nil))
        }
        let before = try stores.fingerprint(name)
        let error = expectError(.invalidSchema) { try stores.open(name, PeopleV4.model, plan: PeopleV4.plan) }
        #expect(error?.message.contains("version 2") == true, "\(String(describing: error))")
        #expect(try stores.fingerprint(name) == before)
    }
}
