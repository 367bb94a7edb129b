import Foundation
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// Three versions of an app's model, as an app keeps them: each version's types in its own namespace.
enum PeopleV1 {
    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        var age: String
        var street: String
        var number: Int
        static var entityName: String { "Person" }
        static let indexes: [Index] = [.on("name")]
    }

    struct Legacy: Entity {
        var id: Int64
        var blob: String
    }

    static let model = Model(version: 1, entities: [Person.self, Legacy.self])
}

enum PeopleV2 {
    struct Person: Entity, Equatable {
        var id: Int64
        var fullName: String
        var age: String
        var street: String
        var number: Int
        var karma: Int
        static var entityName: String { "Person" }
        static let indexes: [Index] = [.on("fullName")]
        static let defaultValues: [String: Value] = ["karma": 10]
    }

    static let model = Model(version: 2, entities: [Person.self, PeopleV1.Legacy.self])

    /// The block a v2 app ships: rename.
    static let migration: MigrationBlock = { migration, oldSchemaVersion in
        if oldSchemaVersion < 2 {
            try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
        }
    }
}

enum PeopleV3 {
    struct Person: Entity, Equatable {
        var id: Int64
        var firstName: String
        var lastName: String
        var age: Int
        var address: String
        var karma: Int
        static var entityName: String { "Person" }
        static let indexes: [Index] = [.on("lastName"), .on("age")]
        static let defaultValues: [String: Value] = ["karma": 10]
    }

    struct Pet: Entity, Equatable {
        var id: Int64
        var owner: Int64
        var name: String
    }

    static let model = Model(version: 3, entities: [Person.self, Pet.self])

    /// The block a v3 app ships: one closure for every older version.
    static let migration: MigrationBlock = { migration, oldSchemaVersion in
        try migration.enumerateObjects(ofType: "Person") { old, new in
            guard let old, let new else { return }
            // v1 called it `name`; v2 renamed it `fullName`. Split it in two.
            let fullName = try old.string(oldSchemaVersion < 2 ? "name" : "fullName") ?? ""
            let parts = fullName.split(separator: " ", maxSplits: 1).map(String.init)
            try new.set("firstName", to: parts.first ?? "")
            try new.set("lastName", to: parts.count > 1 ? parts[1] : "")
            // String → Int, with a parse.
            try new.set("age", to: Int(try old.string("age") ?? "") ?? -1)
            // Two merged into one.
            try new.set("address", to: "\(try old.int("number") ?? 0) \(try old.string("street") ?? "")")
            if oldSchemaVersion >= 2 { try new.set("karma", to: try old.int("karma") ?? 0) }
            // Objects created during the migration.
            if try old.int64("id")! % 10 == 0 {
                try migration.create("Pet", value: ["id": try old["id"], "owner": try old["id"], "name": "Rex"])
            }
        }
        try migration.deleteData(forType: "Legacy")
    }
}

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

    func seedV1(_ directory: URL, encrypted: Bool = true, count: Int = Self.count) throws {
        let db = try builder(directory, PeopleV1.model, encrypted: encrypted).create()
        try db.write { context in
            for id in 1...count {
                try context.create(
                    PeopleV1.Person(
                        id: Int64(id), name: "Ada\(id) Lovelace\(id)", age: "\(20 + id % 50)", street: "Main St",
                        number: id))
            }
            try context.create(PeopleV1.Legacy(id: 1, blob: "legacy"))
        }
    }

    func expectV3(_ db: LMDBDatabase, karma: Int) throws {
        let people: [PeopleV3.Person] = try db.recover()
        #expect(people.count == Self.count)
        #expect(
            people.first
                == PeopleV3.Person(
                    id: 1, firstName: "Ada1", lastName: "Lovelace1", age: 21, address: "1 Main St", karma: karma))
        #expect(try db.count(PeopleV3.Person.self, where: Field("age") == 21) == 2, "the new index is built")
        #expect(try db.recover(PeopleV3.Person.self, key: "lastName", value: "Lovelace7").map(\.id) == [7])
        let pets: [PeopleV3.Pet] = try db.recover()
        #expect(pets.map(\.owner) == stride(from: 10, through: Int64(Self.count), by: 10).map { $0 })
        #expect(try db.verify().isSound)
    }

    @Test(arguments: [true, false])
    func chainsFromEveryOldVersionInOneStartUp(encrypted: Bool) throws {
        // v1 → v3 directly.
        try withTemporaryDirectory { directory in
            try seedV1(directory, encrypted: encrypted)
            try expectV3(
                builder(directory, PeopleV3.model, encrypted: encrypted, block: PeopleV3.migration).create(), karma: 10)
        }
        // v1 → v2, then v2 → v3, each start-up with the block its app shipped.
        try withTemporaryDirectory { directory in
            try seedV1(directory, encrypted: encrypted)
            do {
                let v2 = try builder(directory, PeopleV2.model, encrypted: encrypted, block: PeopleV2.migration)
                    .create()
                let renamed = try #require(try v2.recover(PeopleV2.Person.self, id: 5))
                #expect(renamed.fullName == "Ada5 Lovelace5", "the renamed attribute keeps its value")
                #expect(renamed.karma == 10, "the declared default is written into every old record")
                #expect(
                    try v2.recover(PeopleV2.Person.self, key: "fullName", value: "Ada9 Lovelace9").map(\.id) == [9])
                try v2.write { try $0.update(PeopleV2.Person(from: renamed, karma: 99)) }
            }
            try expectV3(
                builder(directory, PeopleV3.model, encrypted: encrypted, block: PeopleV3.migration).create(), karma: 10)
        }
    }

    @Test func aBlockCreatesObjectsFromPlainSwiftValues() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory, count: 3)
            let db = try builder(directory, Model(version: 3, entities: [PeopleV3.Person.self, PeopleV3.Pet.self])) {
                migration, _ in
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
            }.create()
            #expect(
                try db.recover(PeopleV3.Pet.self)
                    == [1, 2, 3].map {
                        PeopleV3.Pet(id: $0 * 10, owner: $0, name: "pet \($0)")
                    })
        }
    }

    @Test func theRemovedAttributeLeavesTheStoredRecord() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory, encrypted: false)
            let db = try builder(directory, PeopleV3.model, encrypted: false, block: PeopleV3.migration).create()
            let raw = try #require(try db.read { try $0.storedBytes(of: PeopleV3.Person.self, id: 3) })
            let values = try StoredBytes.record(raw)
            #expect(values.count == 6, "one value per attribute of the new schema, no old values kept")
            #expect(raw.offset(of: Data("Main St".utf8)) != nil, "the merged address")
            #expect(raw.offset(of: Data("Ada3 Lovelace3".utf8)) == nil, "the split attribute is gone")
            #expect(try db.verify().entitiesChecked == 2, "the deleted entity's databases are gone")
        }
    }

    @Test func aVersionBumpWithoutSchemaChangeRunsTheBlock() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let calls = Mutex<[Int]>([])
            var model = PeopleV1.model
            model.version = 2
            let db = try builder(directory, model) { migration, oldSchemaVersion in
                calls.withLock { $0.append(oldSchemaVersion) }
                try migration.enumerateObjects(ofType: "Person") { old, new in
                    try new?.set("name", to: (try old?.string("name") ?? "").uppercased())
                }
            }.create()
            #expect(calls.withLock { $0 } == [1], "once, with the stored version")
            #expect(try db.recover(PeopleV1.Person.self, id: 2)?.name == "ADA2 LOVELACE2")
            #expect(try db.recover(PeopleV1.Person.self, key: "name", value: "ADA4 LOVELACE4").count == 1)
            // Opened again at the same version: nothing to migrate, the block doesn't run.
            _ = try builder(directory, model) { _, _ in calls.withLock { $0.append(99) } }.create()
            #expect(calls.withLock { $0 } == [1])
        }
    }

    @Test func aStoreOpenInTheOldSchemaInThisProcessIsNotMigratedUnderIt() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let open = try builder(directory, PeopleV1.model).create()
            expectError(.busy) {
                _ = try builder(directory, PeopleV2.model) { _, _ in Issue.record("ran the block") }.create()
            }
            #expect(try open.count(PeopleV1.Person.self) == Self.count, "the open database still reads its records")
        }
    }

    @Test func aDryRunReportsTheMigrationAndChangesNothing() throws {
        try withTemporaryDirectory { directory in
            #expect(try builder(directory, PeopleV3.model, block: PeopleV3.migration).dryRunMigration() == nil)
            #expect(!FileManager.default.fileExists(atPath: dataFile(directory, name: "People").path))
            try seedV1(directory)
            let before = try Data(contentsOf: dataFile(directory, name: "People"))
            let report = try #require(
                try builder(directory, PeopleV3.model, block: PeopleV3.migration).dryRunMigration())
            #expect(report.fromVersion == 1 && report.toVersion == 3)
            #expect(report.changes.contains("1 → 3: 'Person.age' changed type from string to integer"), "\(report)")
            #expect(
                report.entities == [
                    .init(
                        name: "Person", recordsBefore: Self.count, recordsAfter: Self.count,
                        recordsRewritten: Self.count),
                    .init(name: "Legacy", recordsBefore: 1, recordsAfter: 0, recordsRewritten: 0),
                    .init(
                        name: "Pet", recordsBefore: 0, recordsAfter: Self.count / 10, recordsRewritten: Self.count / 10),
                ])
            #expect(try Data(contentsOf: dataFile(directory, name: "People")) == before, "rolled back")
            #expect(try builder(directory, PeopleV1.model).create().count(PeopleV1.Person.self) == Self.count)
            // The failure a real start-up would meet, without the change.
            let failing = builder(directory, PeopleV3.model) { _, _ in throw Oops() }
            expectError(.migrationFailed) { _ = try failing.dryRunMigration() }
            try expectV3(builder(directory, PeopleV3.model, block: PeopleV3.migration).create(), karma: 10)
            #expect(try builder(directory, PeopleV3.model).dryRunMigration() == nil, "nothing left to migrate")
        }
    }

    @Test func aNewerStoreIsRefusedUntouched() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            _ = try builder(directory, PeopleV2.model, block: PeopleV2.migration).create()
            let before = try Data(contentsOf: dataFile(directory, name: "People"))
            expectError(.invalidConfiguration) {
                _ = try builder(directory, PeopleV1.model) { _, _ in Issue.record("ran the block") }.create()
            }
            #expect(try Data(contentsOf: dataFile(directory, name: "People")) == before)
        }
    }

    @Test func aWrongPassphraseFailsBeforeAnyMigrationWork() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let before = try Data(contentsOf: dataFile(directory, name: "People"))
            var wrong = builder(directory, PeopleV3.model) { _, _ in Issue.record("ran the block") }
            wrong.passphrase = "not the passphrase"
            expectError(.wrongPassphrase) { _ = try wrong.create() }
            #expect(try Data(contentsOf: dataFile(directory, name: "People")) == before)
        }
    }

    @Test func unconvertedTypeChangesAndUnfilledAttributesAreNamed() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            // The block forgets `age` (String → Int) and leaves `firstName` unset.
            let forgetful = builder(directory, PeopleV3.model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { _, new in
                    try new?.set("firstName", to: "x")
                    try new?.set("lastName", to: "x")
                    try new?.set("address", to: "y")
                }
            }
            let error = expectError(.migrationFailed) { _ = try forgetful.create() }
            #expect(error?.message.contains("'Person.age' changed type from string to integer") == true, "\(error!)")
            let noBlock = builder(directory, PeopleV3.model)
            // Without code, the answer an inferred step gives on the SQL backends: `migrationRequired`, before any
            // change, in the same words.
            let blocked = expectError(.migrationRequired) { _ = try noBlock.create() }
            #expect(blocked?.message.contains("migration step 1 → 3 can't be inferred") == true, "\(blocked!)")
            #expect(
                blocked?.message.contains("'Person.firstName' is added, not optional, and has no default") == true,
                "\(blocked!)")
            #expect(blocked?.message.contains("'Person.age' changed type") == true)
            #expect(try builder(directory, PeopleV1.model).create().count(PeopleV1.Person.self) == Self.count)
        }
    }

    struct Oops: Error {}

    /// An object kept past its closure (the migration block runs on the test's thread, once).
    final class Escaped: @unchecked Sendable {
        var object: MigrationObject?
    }

    @Test func whatTheBlockThrowsComesOutTypedWithItsCause() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let thrown = expectError(.migrationFailed) {
                _ = try builder(directory, PeopleV2.model) { _, _ in throw Oops() }.create()
            }
            #expect(thrown?.underlyingError is Oops)
            #expect(thrown?.message.contains("Oops") == true)
            let unknown = expectError(.migrationFailed) {
                _ = try builder(directory, PeopleV2.model) { migration, _ in
                    try migration.enumerateObjects(ofType: "Person") { old, _ in _ = try old?["nickname"] }
                }.create()
            }
            #expect((unknown?.underlyingError as? PersistenceError)?.code == .unknownAttribute)
            #expect(unknown?.message.contains("'nickname'") == true)
            let entity = expectError(.migrationFailed) {
                _ = try builder(directory, PeopleV2.model) { migration, _ in
                    try migration.enumerateObjects(ofType: "Persons") { _, _ in }
                }.create()
            }
            #expect((entity?.underlyingError as? PersistenceError)?.code == .unknownEntity)
            let typed = expectError(.migrationFailed) {
                _ = try builder(directory, PeopleV2.model) { migration, _ in
                    try migration.enumerateObjects(ofType: "Person") { old, _ in _ = try old?.int("name") }
                }.create()
            }
            #expect((typed?.underlyingError as? PersistenceError)?.code == .typeMismatch)
            #expect(try builder(directory, PeopleV1.model).create().count(PeopleV1.Person.self) == Self.count)
        }
    }

    @Test func objectsFollowTheRules() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory)
            let escaped = Escaped()
            var model = PeopleV1.model
            model.version = 2
            let db = try builder(directory, model) { migration, _ in
                try migration.enumerateObjects(ofType: "Person") { old, new in
                    guard let old, let new else { return }
                    expectError(.readOnly) { try old.set("name", to: "x") }
                    expectError(.invalidArgument) { try new.set("id", to: 12345) }
                    expectError(.typeMismatch) { try new.set("number", to: "seven") }
                    expectError(.unknownAttribute) { try new.set("nickname", to: "x") }
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
                expectError(.unknownEntity) { try migration.create("Legacy2", value: [:]) }
            }.create()
            #expect(try db.count(PeopleV1.Person.self) == Self.count - 3 + 2)
            #expect(try db.recover(PeopleV1.Person.self, id: 2_000)?.name == "set after create")
            #expect(try db.recover(PeopleV1.Person.self, id: 3_000) == nil)
            #expect(try db.recover(PeopleV1.Person.self, key: "name", value: "changed").map(\.id) == [4])
            #expect(try db.verify().isSound)
        }
    }

    func fresh(id: Int64) -> [String: Value] {
        ["id": .integer(id), "name": "New \(id)", "age": "1", "street": "New St", "number": 1]
    }

    @Test func cancellingAnAsyncOpenRollsTheMigrationBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try seedV1(directory, count: 2_500)
        let canceller = TaskCanceller()
        let calls = Mutex(0)
        var cancelled = builder(directory, PeopleV3.model) { migration, version in
            calls.withLock { $0 += 1 }
            try PeopleV3.migration(migration, version)
        }
        cancelled.migrationProgress = { progress in
            if progress.completed >= 1000 { canceller.cancel() }
        }
        let opening = Task { _ = try await cancelled.open() }
        canceller.set(opening)
        await #expect(throws: CancellationError.self) { try await opening.value }
        #expect(calls.withLock { $0 } == 1)
        // The store is still at version 1: the migration runs again, whole, on the next open.
        let db = try builder(directory, PeopleV3.model, block: PeopleV3.migration).create()
        #expect(calls.withLock { $0 } == 1)
        #expect(try db.count(PeopleV3.Person.self) == 2_500)
        #expect(try db.recover(PeopleV3.Person.self, id: 1)?.lastName == "Lovelace1")
        #expect(try await db.verify().isSound)
    }

    @Test func progressIsReportedPerEntity() throws {
        try withTemporaryDirectory { directory in
            try seedV1(directory, count: 2_500)
            let reports = Mutex<[MigrationProgress]>([])
            let calls = Mutex(0)
            var builder = builder(directory, PeopleV3.model) { migration, version in
                calls.withLock { $0 += 1 }
                try PeopleV3.migration(migration, version)
            }
            builder.migrationProgress = { progress in reports.withLock { $0.append(progress) } }
            _ = try builder.create()
            #expect(calls.withLock { $0 } == 1)
            let people = reports.withLock { $0 }.filter { $0.entity == "Person" }
            #expect(people.filter { $0.stage == .enumerating }.map(\.completed) == [0, 1000, 2000, 2500])
            #expect(people.filter { $0.stage == .rewriting }.map(\.completed) == [0, 1000, 2000, 2500])
            #expect(people.allSatisfy { $0.total == 2500 })
            #expect(people.last?.fractionCompleted == 1)
        }
    }
}

extension PeopleV2.Person {
    init(from person: Self, karma: Int) {
        self = person
        self.karma = karma
    }
}
