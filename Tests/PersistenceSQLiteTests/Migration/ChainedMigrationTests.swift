import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// A store of each shipped version opened by the current one: every step of the chain, inferred or mapped, in one
/// start-up.
struct ChainedMigrationTests {
    static let expected: [V4.Person] = [
        V4.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 0),
        V4.Person(id: 2, fullName: "Alan", age: 41, email: "alan@example.com", active: true, city: nil, rank: 0),
    ]

    @Test func fromVersion1() throws {
        try withTemporaryDirectory { directory in
            do {
                let v1 = try peopleBuilder(directory, V1.model, plan: nil).create()
                try v1.create(V1.Person(id: 1, name: "Ada", age: "36", email: nil))
                try v1.create(V1.Person(id: 2, name: "Alan", age: "41", email: "alan@example.com"))
                try v1.create(V1.Address(id: 10, personID: 1, city: "London"))
            }
            let db = try peopleBuilder(directory, V4.model).create()
            #expect(try db.recover(V4.Person.self) == Self.expected)
            #expect(try db.count(V4.Label.self) == 0)
            let report = try #require(db.migrationReport)
            #expect(report.steps.map(\.kind) == [.inferred, .mapped, .inferred])
            #expect(report.steps.map(\.fromVersion) == [1, 2, 3])
            #expect(report.steps[0].changes.contains("'Person.name' renamed 'fullName'"), "\(report)")
            #expect(report.steps[2].changes.contains("entity 'Tag' renamed 'Label'"), "\(report)")
            #expect(try db.verify().isSound)
            // The indexes of the last version, through the queries that use them.
            #expect(try db.count(V4.Person.self, where: Field("age") == 41) == 1)
            #expect(try db.count(V4.Person.self, where: Field("fullName") == "Ada") == 1)
            let indexes = try db.read {
                try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            }
            #expect(
                indexes.compactMap { $0["name"] } == [.text("index_Person_age"), .text("index_Person_fullName")])
            let tables = try db.read {
                try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            }
            #expect(
                tables.compactMap { $0["name"] }
                    == [.text("Label"), .text("Person"), .text("persistence_metadata")])
        }
    }

    @Test func fromVersion2() throws {
        try withTemporaryDirectory { directory in
            do {
                let v2 = try peopleBuilder(directory, V2.model).create()
                try v2.create(V2.Person(id: 1, fullName: "Ada", age: "36", email: nil, active: true))
                try v2.create(V2.Person(id: 2, fullName: "Alan", age: "41", email: "alan@example.com", active: true))
                try v2.create(V2.Address(id: 10, personID: 1, city: "London"))
                try v2.create(V2.Tag(id: 5, label: "friends"))
            }
            let db = try peopleBuilder(directory, V4.model).create()
            #expect(try db.recover(V4.Person.self) == Self.expected)
            #expect(try db.recover(V4.Label.self) == [V4.Label(id: 5, label: "friends")])
            #expect(db.migrationReport?.steps.map(\.kind) == [.mapped, .inferred])
        }
    }

    @Test func fromVersion3() throws {
        try withTemporaryDirectory { directory in
            do {
                let v3 = try peopleBuilder(directory, V3.model).create()
                try v3.create(
                    V3.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 7))
                try v3.create(V3.Tag(id: 5, label: "friends"))
            }
            let db = try peopleBuilder(directory, V4.model).create()
            #expect(
                try db.recover(V4.Person.self)
                    == [V4.Person(id: 1, fullName: "Ada", age: 36, email: "", active: true, city: "London", rank: 7)])
            #expect(try db.recover(V4.Label.self) == [V4.Label(id: 5, label: "friends")])
            #expect(db.migrationReport?.steps.map(\.kind) == [.inferred])
        }
    }

    @Test func aStoreOfTheCurrentVersionOpensWithoutMigrating() throws {
        try withTemporaryDirectory { directory in
            do {
                let db = try peopleBuilder(directory, V4.model).create()
                #expect(db.migrationReport == nil)
                try db.create(V4.Label(id: 1, label: "x"))
            }
            let before = try storeBytes(directory)
            let progress = Counter()
            var builder = peopleBuilder(directory, V4.model)
            builder.migrationProgress = { _ in progress.increment() }
            let db = try builder.create()
            #expect(db.migrationReport == nil)
            #expect(progress.count == 0)
            #expect(try builder.dryRunMigration() == nil)
            _ = db
            #expect(try storeBytes(directory) == before)
        }
    }

    @Test func aStepWithoutMappingThatCantBeInferredIsRefusedBeforeAnyChange() throws {
        try withTemporaryDirectory { directory in
            do {
                let v1 = try peopleBuilder(directory, V1.model, plan: nil).create()
                try v1.create(V1.Person(id: 1, name: "Ada", age: "36", email: nil))
            }
            let before = try storeBytes(directory)
            // Without the 2 → 3 mapping model, age text → integer can't be inferred.
            let error = expectError(.migrationRequired) {
                try peopleBuilder(directory, V4.model, plan: MigrationPlan(models: [V1.model, V2.model, V3.model]))
                    .create()
            }
            #expect(error?.message.contains("migration step 2 → 3") == true, "\(String(describing: error))")
            #expect(error?.message.contains("'Person.age' changed type from string to integer") == true)
            #expect(error?.message.contains("36") == false, "no stored value in the message")
            #expect(try storeBytes(directory) == before)
            #expect(
                !FileManager.default.fileExists(
                    atPath: try peopleBuilder(directory, V4.model)
                        .migrationBackupFile(fromVersion: 1).path))
            // The store still opens as version 1.
            let v1 = try peopleBuilder(directory, V1.model, plan: nil).create()
            #expect(try v1.count(V1.Person.self) == 1)
        }
    }

    @Test func planMistakesAreRefusedBeforeTouchingDisk() throws {
        try withTemporaryDirectory { directory in
            let outOfOrder = MigrationPlan(models: [V2.model, V1.model])
            expectError(.invalidConfiguration) { try peopleBuilder(directory, V4.model, plan: outOfOrder).create() }
            let skipping = MigrationPlan(
                models: [V1.model, V2.model, V3.model], mappings: [MappingModel(from: 1, to: 3, [])])
            expectError(.invalidConfiguration) { try peopleBuilder(directory, V4.model, plan: skipping).create() }
            let twice = MigrationPlan(models: [V1.model, V2.model, V3.model], mappings: [mapping2to3, mapping2to3])
            expectError(.invalidConfiguration) { try peopleBuilder(directory, V4.model, plan: twice).create() }
            let created = try contents(of: directory)
            #expect(created.isEmpty)
        }
    }

    @Test func aStoreThatIsNotTheDeclaredVersionIsRefused() throws {
        try withTemporaryDirectory { directory in
            do {
                // Version 2's number, version 1's schema: the plan doesn't describe this store.
                var wrong = peopleBuilder(directory, Model(version: 2, entities: [V1.Person.self]), plan: nil)
                wrong.migrationPlan = nil
                try wrong.create().create(V1.Person(id: 1, name: "Ada", age: "36", email: nil))
            }
            let before = try storeBytes(directory)
            let error = expectError(.invalidSchema) { try peopleBuilder(directory, V4.model).create() }
            #expect(error?.message.contains("version 2") == true, "\(String(describing: error))")
            #expect(try storeBytes(directory) == before)
        }
    }
}
