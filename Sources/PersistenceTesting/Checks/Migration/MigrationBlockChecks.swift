import Foundation
import PersistenceCore
import Synchronization
import Testing

/// A migration block gives the same records, reports and refusals on every backend that runs blocks: the checks of
/// ``MigrationConformanceSuite/blockChecks``.
enum MigrationBlockChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("block: chains from every old version in one start-up") { try chains($0) },
        MigrationConformanceCheck("block: creates objects from plain Swift values") { try createsObjects($0) },
        MigrationConformanceCheck("block: a version bump without schema change runs the block once") {
            try versionBump($0)
        },
        MigrationConformanceCheck("block: a dry run reports the migration and changes nothing") { try dryRun($0) },
        MigrationConformanceCheck("block: a newer store is refused untouched") { try newerStore($0) },
        MigrationConformanceCheck("block: unconverted type changes and unfilled attributes are named") {
            try unconverted($0)
        },
        MigrationConformanceCheck("block: what the block throws comes out typed with its cause") { try throwing($0) },
        MigrationConformanceCheck("block: objects follow the rules") { try objectRules($0) },
        MigrationConformanceCheck("block: progress is reported per entity") { try progress($0) },
        MigrationConformanceCheck("block: a plan and a block together are refused") { try planAndBlock($0) },
        MigrationConformanceCheck("block: aliases follow an entity renamed by its renaming identifier") {
            try aliasesFollow($0)
        },
        MigrationConformanceCheck("block: cancelling an async open rolls the migration back") {
            try await cancelling($0)
        },
    ]

    static let name = "People"
    static let count = 100

    /// Counts calls of a block, from any thread.
    final class Calls: Sendable {
        private let calls = Mutex<[Int]>([])
        var all: [Int] { calls.withLock { $0 } }
        func append(_ version: Int) { calls.withLock { $0.append(version) } }
    }

    static func seedV1(_ stores: MigrationStores, count: Int = count) throws {
        try stores.seed(name, BlockPeopleV1.model) { try BlockPeopleV1.seed($0, count: count) }
    }

    static func expectV3(_ db: any Database, karma: Int, count: Int = count) throws {
        let people: [BlockPeopleV3.Person] = try db.recover()
        #expect(people.count == count)
        #expect(
            people.first
                == BlockPeopleV3.Person(
                    id: 1, firstName: "Ada1", lastName: "Lovelace1", age: 21, address: "1 Main St", karma: karma))
        #expect(
            try db.count(BlockPeopleV3.Person.self, where: Field("age") == 21)
                == (1...count).filter { $0 % 50 == 1 }.count,
            "the new index is used")
        #expect(try db.recover(BlockPeopleV3.Person.self, key: "lastName", value: "Lovelace7").map(\.id) == [7])
        let pets: [BlockPeopleV3.Pet] = try db.recover()
        #expect(pets.map(\.owner) == stride(from: 10, through: Int64(count), by: 10).map { $0 })
        #expect(try db.verify().isSound)
    }

    static func chains(_ stores: MigrationStores) throws {
        // v1 → v3 directly.
        try seedV1(stores)
        let direct = try stores.open(name, BlockPeopleV3.model, block: BlockPeopleV3.migration)
        try expectV3(direct.database, karma: 10)
        let report = try #require(direct.report)
        #expect(report.steps.map(\.kind) == [.mapped])
        try direct.database.close()

        // v1 → v2, then v2 → v3, each start-up with the block its app shipped.
        let other = MigrationStores(backend: stores.backend, directory: stores.directory)
        let name = "Stepwise"
        try other.seed(name, BlockPeopleV1.model) { try BlockPeopleV1.seed($0, count: count) }
        let v2 = try other.open(name, BlockPeopleV2.model, block: BlockPeopleV2.migration).database
        let renamed = try #require(try v2.recover(BlockPeopleV2.Person.self, id: 5))
        #expect(renamed.fullName == "Ada5 Lovelace5", "the renamed attribute keeps its value")
        #expect(renamed.karma == 10, "the declared default is written into every old record")
        #expect(try v2.recover(BlockPeopleV2.Person.self, key: "fullName", value: "Ada9 Lovelace9").map(\.id) == [9])
        var updated = renamed
        updated.karma = 99
        try v2.write { try $0.update(updated) }
        try v2.close()
        let v3 = try other.open(name, BlockPeopleV3.model, block: BlockPeopleV3.migration).database
        try expectV3(v3, karma: 10)
        #expect(try v3.recover(BlockPeopleV3.Person.self, id: 5)?.karma == 99, "v2's value carried by the block")
        try v3.close()
    }

    static func createsObjects(_ stores: MigrationStores) throws {
        try seedV1(stores, count: 3)
        let db = try stores.open(name, BlockPeopleV3.model) { migration, _ in
            try migration.enumerateObjects(ofType: "Person") { old, new in
                guard let old, let new else { return }
                let id: Int64 = try old.int64("id") ?? 0
                // Realm's shape: a dictionary of plain Swift values.
                try migration.create("Pet", value: ["id": id * 10, "owner": id, "name": "pet \(id)"])
                try new.set("firstName", to: "F")
                try new.set("lastName", to: "L")
                try new.set("address", to: "A")
                try new.set("age", to: Int(try old.string("age") ?? "") ?? 0)
            }
        }.database
        #expect(
            try db.recover(BlockPeopleV3.Pet.self)
                == [1, 2, 3].map { BlockPeopleV3.Pet(id: $0 * 10, owner: $0, name: "pet \($0)") })
        #expect(try db.count(BlockPeopleV3.Person.self) == 3)
        try db.close()
    }

    static func versionBump(_ stores: MigrationStores) throws {
        try seedV1(stores)
        let calls = Calls()
        var model = BlockPeopleV1.model
        model.version = 2
        let db = try stores.open(name, model) { migration, oldSchemaVersion in
            calls.append(oldSchemaVersion)
            try migration.enumerateObjects(ofType: "Person") { old, new in
                try new?.set("name", to: (try old?.string("name") ?? "").uppercased())
            }
        }.database
        #expect(calls.all == [1], "once, with the stored version")
        #expect(try db.recover(BlockPeopleV1.Person.self, id: 2)?.name == "ADA2 LOVELACE2")
        #expect(try db.recover(BlockPeopleV1.Person.self, key: "name", value: "ADA4 LOVELACE4").count == 1)
        try db.close()
        // Opened again at the same version: nothing to migrate, the block doesn't run.
        try stores.open(name, model) { _, _ in calls.append(99) }.database.close()
        #expect(calls.all == [1])
    }

    static func dryRun(_ stores: MigrationStores) throws {
        #expect(try stores.dryRun(name, BlockPeopleV3.model, plan: nil, block: BlockPeopleV3.migration) == nil)
        #expect(try stores.storeNames().isEmpty)
        try seedV1(stores)
        let before = try stores.fingerprint(name)
        let report = try #require(
            try stores.dryRun(name, BlockPeopleV3.model, plan: nil, block: BlockPeopleV3.migration))
        #expect(report.fromVersion == 1 && report.toVersion == 3)
        #expect(report.changes.contains("1 → 3: 'Person.age' changed type from string to integer"), "\(report)")
        #expect(
            report.entities == [
                .init(name: "Person", recordsBefore: count, recordsAfter: count, recordsRewritten: count),
                .init(name: "Legacy", recordsBefore: 1, recordsAfter: 0, recordsRewritten: 0),
                .init(name: "Pet", recordsBefore: 0, recordsAfter: count / 10, recordsRewritten: count / 10),
            ], "\(report.entities)")
        #expect(try stores.fingerprint(name) == before, "rolled back")
        // The failure a real start-up would meet, without the change.
        expectError(.migrationFailed) {
            try stores.dryRun(name, BlockPeopleV3.model, plan: nil) { _, _ in throw Oops() }
        }
        #expect(try stores.fingerprint(name) == before)
        let opened = try stores.open(name, BlockPeopleV3.model, block: BlockPeopleV3.migration)
        #expect(opened.report == report, "the dry run's report is the real run's")
        try expectV3(opened.database, karma: 10)
        try opened.database.close()
        #expect(try stores.dryRun(name, BlockPeopleV3.model, plan: nil) == nil, "nothing left to migrate")
    }

    static func newerStore(_ stores: MigrationStores) throws {
        try seedV1(stores)
        try stores.open(name, BlockPeopleV2.model, block: BlockPeopleV2.migration).database.close()
        let before = try stores.fingerprint(name)
        expectError(.invalidConfiguration) {
            try stores.open(name, BlockPeopleV1.model) { _, _ in Issue.record("ran the block") }
        }
        #expect(try stores.fingerprint(name) == before)
    }

    static func unconverted(_ stores: MigrationStores) throws {
        try seedV1(stores)
        let before = try stores.fingerprint(name)
        // The block forgets `age` (String → Int).
        let error = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV3.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { _, new in
                    try new?.set("firstName", to: "x")
                    try new?.set("lastName", to: "x")
                    try new?.set("address", to: "y")
                }
            }
        }
        #expect(error?.message.contains("'Person.age' changed type from string to integer") == true, "\(error!)")
        #expect(try stores.fingerprint(name) == before)
        // The block leaves `firstName` unset (nil in a required attribute).
        let unfilled = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV3.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, new in
                    try new?.set("lastName", to: "x")
                    try new?.set("address", to: "y")
                    try new?.set("age", to: Int(try old?.string("age") ?? "") ?? 0)
                }
            }
        }
        #expect(unfilled?.message.contains("'Person.firstName' is not optional") == true, "\(unfilled!)")
        // Without code, the answer an inferred step gives: `migrationRequired`, before any change.
        let blocked = expectError(.migrationRequired) { try stores.open(name, BlockPeopleV3.model) }
        #expect(blocked?.message.contains("migration step 1 → 3 can't be inferred") == true, "\(blocked!)")
        #expect(
            blocked?.message.contains("'Person.firstName' is added, not optional, and has no default") == true,
            "\(blocked!)")
        #expect(try stores.fingerprint(name) == before)
        let old = try stores.open(name, BlockPeopleV1.model).database
        #expect(try old.count(BlockPeopleV1.Person.self) == count)
        try old.close()
    }

    struct Oops: Error {}

    static func throwing(_ stores: MigrationStores) throws {
        try seedV1(stores)
        let before = try stores.fingerprint(name)
        let thrown = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV2.model) { _, _ in throw Oops() }
        }
        #expect(thrown?.underlyingError is Oops)
        #expect(thrown?.message.contains("Oops") == true)
        // Half the records rewritten, then a throw.
        let halfway = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV2.model) { migration, _ in
                try BlockPeopleV2.migration(migration, 1)
                var seen = 0
                try migration.enumerateObjects(ofType: "Person") { _, new in
                    seen += 1
                    try new?.set("fullName", to: "rewritten")
                    if seen == count / 2 { throw Oops() }
                }
            }
        }
        #expect(halfway?.underlyingError is Oops)
        let unknown = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV2.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, _ in _ = try old?["nickname"] }
            }
        }
        #expect((unknown?.underlyingError as? PersistenceError)?.code == .unknownAttribute)
        #expect(unknown?.message.contains("'nickname'") == true)
        let entity = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV2.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Persons") { _, _ in }
            }
        }
        #expect((entity?.underlyingError as? PersistenceError)?.code == .unknownEntity)
        let typed = expectError(.migrationFailed) {
            try stores.open(name, BlockPeopleV2.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, _ in _ = try old?.int("name") }
            }
        }
        #expect((typed?.underlyingError as? PersistenceError)?.code == .typeMismatch)
        #expect(try stores.fingerprint(name) == before)
        let old = try stores.open(name, BlockPeopleV1.model).database
        #expect(try old.count(BlockPeopleV1.Person.self) == count)
        #expect(try old.recover(BlockPeopleV1.Person.self, id: 1)?.name == "Ada1 Lovelace1")
        try old.close()
    }

    /// An object kept past its closure (the block runs on the check's thread, once).
    final class Escaped: @unchecked Sendable {
        var object: MigrationObject?
    }

    static func fresh(id: Int64) -> [String: Value] {
        ["id": .integer(id), "name": "New \(id)", "age": "1", "street": "New St", "number": 1]
    }

    static func objectRules(_ stores: MigrationStores) throws {
        try seedV1(stores)
        let escaped = Escaped()
        var model = BlockPeopleV1.model
        model.version = 2
        let db = try stores.open(name, model) { migration, _ in
            try migration.enumerateObjects(ofType: "Person") { old, new in
                guard let old, let new else { return }
                expectError(.readOnly) { try old.set("name", to: "x") }
                expectError(.invalidArgument) { try new.set("id", to: 12345) }
                expectError(.typeMismatch) { try new.set("number", to: "seven") }
                expectError(.unknownAttribute) { try new.set("nickname", to: "x") }
                expectError(.invalidArgument) { try migration.enumerateObjects(ofType: "Person") { _, _ in } }
                if try old.int64("id") == 1 { escaped.object = new }
                if try old.int64("id")! <= 3 { try migration.delete(new) }
                if try old.int64("id") == 4 { try new.set("name", to: "changed") }
            }
            // A second enumeration sees the old values as stored and the new ones as the first left them.
            try migration.enumerateObjects(ofType: "Person") { old, new in
                guard let old, let new else {
                    Issue.record("objects are missing")
                    return
                }
                #expect(try old.int64("id")! > 3, "deleted objects are gone")
                if try old.int64("id") == 4 {
                    #expect(try old.string("name") == "Ada4 Lovelace4")
                    #expect(try new.string("name") == "changed")
                }
                // Created during this enumeration: not visited by it.
                if try old.int64("id") == 5 { try migration.create("Person", value: fresh(id: 1_000)) }
                #expect(try new.int64("id") != 1_000)
            }
            let created = try migration.create("Person", value: fresh(id: 2_000))
            try created.set("name", to: "set after create")
            let gone = try migration.create("Person", value: fresh(id: 3_000))
            try migration.delete(gone)
            expectError(.contextExpired) { try escaped.object?.set("name", to: "late") }
            expectError(.duplicateKey) { try migration.create("Person", value: fresh(id: 2_000)) }
            expectError(.duplicateKey) { try migration.create("Person", value: fresh(id: 50)) }
            expectError(.unknownEntity) { try migration.create("Legacy2", value: [:]) }
        }.database
        #expect(try db.count(BlockPeopleV1.Person.self) == count - 3 + 2)
        #expect(try db.recover(BlockPeopleV1.Person.self, id: 2_000)?.name == "set after create")
        #expect(try db.recover(BlockPeopleV1.Person.self, id: 3_000) == nil)
        #expect(try db.recover(BlockPeopleV1.Person.self, key: "name", value: "changed").map(\.id) == [4])
        #expect(try db.verify().isSound)
        try db.close()
    }

    static func progress(_ stores: MigrationStores) throws {
        try seedV1(stores, count: 2_500)
        let reports = Mutex<[MigrationProgress]>([])
        let calls = Calls()
        let db = try stores.open(
            name, BlockPeopleV3.model,
            block: { migration, version in
                calls.append(version)
                try BlockPeopleV3.migration(migration, version)
            }, progress: { progress in reports.withLock { $0.append(progress) } }
        ).database
        #expect(calls.all == [1])
        let people = reports.withLock { $0 }.filter { $0.entity == "Person" }
        #expect(people.filter { $0.stage == .enumerating }.map(\.completed) == [0, 1000, 2000, 2500], "\(people)")
        #expect(people.filter { $0.stage == .rewriting }.map(\.completed) == [0, 1000, 2000, 2500], "\(people)")
        #expect(people.allSatisfy { $0.total == 2500 })
        #expect(people.last?.fractionCompleted == 1)
        try expectV3(db, karma: 10, count: 2_500)
        try db.close()
    }

    static func aliasesFollow(_ stores: MigrationStores) throws {
        try ItemV1.seedWithAliases(stores)
        // The block rewrites the renamed entity's records (named by its old name): its run writes them itself.
        let opened = try stores.open("Items", Model(version: 2, entities: [ItemV2.RenamedEntity.self])) {
            migration, _ in
            try migration.enumerateObjects(ofType: "Item") { _, new in
                try new?.set("name", to: (try new?.string("name") ?? "").uppercased())
            }
        }
        let (favourite, top) = try ItemV2.RenamedEntity.aliases(in: opened.database)
        #expect(favourite?.name == "TWO")
        #expect(top.map(\.id) == [3, 1])
        #expect(try opened.database.verify().isSound)
        try opened.database.close()
    }

    static func planAndBlock(_ stores: MigrationStores) throws {
        let plan = MigrationPlan(models: [BlockPeopleV1.model])
        expectError(.invalidConfiguration) {
            try stores.open(name, BlockPeopleV3.model, plan: plan, block: BlockPeopleV3.migration)
        }
        #expect(try stores.storeNames().isEmpty)
    }

    static func cancelling(_ stores: MigrationStores) async throws {
        try seedV1(stores, count: 2_500)
        let before = try stores.fingerprint(name)
        let canceller = TaskCanceller()
        let calls = Calls()
        let opening = Task {
            _ = try await stores.openAsync(
                name, BlockPeopleV3.model,
                block: { migration, version in
                    calls.append(version)
                    try BlockPeopleV3.migration(migration, version)
                },
                progress: { progress in if progress.completed >= 1000 { canceller.cancel() } })
        }
        canceller.set(opening)
        await #expect(throws: CancellationError.self) { _ = try await opening.value }
        #expect(calls.all == [1])
        #expect(try stores.fingerprint(name) == before)
        // The store is still at version 1: the migration runs again, whole, on the next open.
        let db = try stores.open(name, BlockPeopleV3.model, block: BlockPeopleV3.migration).database
        try expectV3(db, karma: 10, count: 2_500)
        try db.close()
    }
}
