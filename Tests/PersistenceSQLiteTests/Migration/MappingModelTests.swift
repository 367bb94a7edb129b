import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Synchronization
import Testing

/// Mapping models: each kind of entity mapping, custom policies that split and merge, failures that leave the store
/// unchanged, the backup, the dry run and progress.
struct MappingModelTests {
    // Version 1: people with their address inline, and two kinds of contacts.
    struct Person1: Entity, Equatable {
        var id: Int64
        var name: String
        var street: String
        var city: String
        static var entityName: String { "Person" }
    }
    struct Customer: Entity, Equatable {
        var id: Int64
        var name: String
        var email: String
    }
    struct Client: Entity, Equatable {
        var id: Int64
        var title: String
        var email: String
    }
    static let v1 = Model(version: 1, entities: [Person1.self, Customer.self, Client.self])

    // Version 2: addresses split out of people; customers and clients merged into contacts by email.
    struct Person2: Entity, Equatable {
        var id: Int64
        var name: String
        var addressID: Int64
        static var entityName: String { "Person" }
    }
    struct Address: Entity, Equatable {
        var id: Int64
        var ownerID: Int64
        var street: String
        var city: String
        static let indexes: [Index] = [.unique("ownerID")]
    }
    struct Contact: Entity, Equatable {
        var id: String
        var name: String
        var sources: Int
    }
    struct Summary: Entity, Equatable {
        var id: String
        var count: Int
    }
    static let v2 = Model(version: 2, entities: [Person2.self, Address.self, Contact.self, Summary.self])

    /// A builder of version 2 (`Scored`) whose plan transforms `Person` with `attributes`.
    private func scoredBuilder(_ directory: URL, _ attributes: [String: AttributeMapping]) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: "Split", model: Model(version: 2, entities: [Scored.self]))
        builder.directory = directory
        builder.migrationPlan = MigrationPlan(
            models: [Self.v1], mappings: [MappingModel(from: 1, to: 2, [.transform("Person", attributes)])])
        return builder
    }

    private func seed(_ directory: URL, people: Int = 3) throws {
        var builder = SQLiteBuilder(databaseName: "Split", model: Self.v1)
        builder.directory = directory
        let db = try builder.create()
        try db.create((1...people).map { Person1(id: Int64($0), name: "p\($0)", street: "s\($0)", city: "c\($0)") })
        try db.create([
            Customer(id: 1, name: "Ann", email: "ann@example.com"),
            Customer(id: 2, name: "Bob", email: "bob@example.com"),
        ])
        try db.create([
            Client(id: 7, title: "Ann (client)", email: "ann@example.com"),
            Client(id: 8, title: "Cy", email: "cy@example.com"),
        ])
    }

    private func builder(_ directory: URL, _ mappings: [EntityMapping]) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: "Split", model: Self.v2)
        builder.directory = directory
        builder.migrationPlan = MigrationPlan(models: [Self.v1], mappings: [MappingModel(from: 1, to: 2, mappings)])
        return builder
    }

    /// Stage 1 makes a person and an address per source person (addressID not known yet); stage 2 points each
    /// person at its address; stage 3 writes a summary.
    static func split(stages: StageLog) -> EntityMigrationPolicy {
        EntityMigrationPolicy(
            createDestinationRecords: { source, context in
                stages.append("create")
                var person = try context.newRecord("Person")
                try person.set("id", to: try source["id"])
                try person.set("name", to: try source["name"])
                try person.set("addressID", to: .integer(0))
                try context.insert(person)
                var address = try context.newRecord("Address")
                try address.set("id", to: .integer(1000 + (try source.int64("id") ?? 0)))
                try address.set("ownerID", to: try source["id"])
                try address.set("street", to: try source["street"])
                try address.set("city", to: try source["city"])
                try context.insert(address)
            },
            fixReferences: { destination, context in
                stages.append("fix \(destination.entityName)")
                guard destination.entityName == "Person" else { return }
                let address = try context.destinationRecords(
                    "Address", where: Field("ownerID") == destination.primaryKey)
                try destination.set("addressID", to: try #require(address.first).primaryKey)
            },
            finish: { context in
                stages.append("finish")
                var summary = try context.newRecord("Summary")
                try summary.set("id", to: .text("people"))
                try summary.set("count", to: .integer(Int64(try context.destinationRecords("Person").count)))
                try context.insert(summary)
            })
    }

    /// Every mapping of the step: people split, contacts merged.
    static func everything(_ stages: StageLog = StageLog()) -> [EntityMapping] {
        [.custom("Person", to: "Person", policy: split(stages: stages)), .add("Address"), mergeCustomers, mergeClients]
    }

    /// Customers become contacts; clients join the contact of the same email or become one.
    static let mergeCustomers = EntityMapping.transform(
        "Customer", to: "Contact",
        ["id": .attribute("email"), "sources": .constant(1)])
    static let mergeClients = EntityMapping.custom(
        "Client", to: "Contact",
        policy: EntityMigrationPolicy(createDestinationRecords: { source, context in
            let email = try source.string("email") ?? ""
            if var existing = try context.destinationRecord("Contact", id: email) {
                try existing.set("sources", to: .integer((try existing.int64("sources") ?? 0) + 1))
                try context.update(existing)
            } else {
                var contact = try context.newRecord("Contact")
                try contact.set("id", to: .text(email))
                try contact.set("name", to: try source["title"])
                try contact.set("sources", to: .integer(1))
                try context.insert(contact)
            }
        }))

    @Test func aCustomPolicySplitsOneEntityIntoTwoAndAnotherMergesTwoIntoOne() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let stages = StageLog()
            let db = try builder(directory, Self.everything(stages)).create()
            #expect(
                try db.recover(Person2.self)
                    == (1...3).map { Person2(id: Int64($0), name: "p\($0)", addressID: 1000 + Int64($0)) })
            #expect(
                try db.recover(Address.self)
                    == (1...3).map {
                        Address(id: 1000 + Int64($0), ownerID: Int64($0), street: "s\($0)", city: "c\($0)")
                    })
            #expect(
                try db.recover(Contact.self) == [
                    Contact(id: "ann@example.com", name: "Ann", sources: 2),
                    Contact(id: "bob@example.com", name: "Bob", sources: 1),
                    Contact(id: "cy@example.com", name: "Cy", sources: 1),
                ])
            #expect(try db.recover(Summary.self) == [Summary(id: "people", count: 3)])
            // Every record created before any reference is fixed; each created record fixed once; finish once.
            #expect(
                stages.entries
                    == Array(repeating: "create", count: 3)
                    + Array(repeating: ["fix Person", "fix Address"], count: 3)
                    .flatMap { $0 } + ["finish"])
            let tables = try db.read {
                try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            }
            #expect(
                tables.compactMap { $0["name"] }
                    == ["Address", "Contact", "Person", "Summary", "persistence_metadata"].map { .text($0) })
            #expect(try db.verify().isSound)
            #expect(db.migrationReport?.steps.first?.kind == .mapped)
        }
    }

    @Test func copyMapsAnEntityUnderAnotherName() throws {
        struct Buyer: Entity, Equatable {
            var id: Int64
            var name: String
            var email: String
            var vip: Bool
            static let defaultValues: [String: Value] = ["vip": false]
        }
        try withTemporaryDirectory { directory in
            try seed(directory)
            var builder = SQLiteBuilder(
                databaseName: "Split", model: Model(version: 2, entities: [Person1.self, Buyer.self]))
            builder.directory = directory
            builder.migrationPlan = MigrationPlan(
                models: [Self.v1], mappings: [MappingModel(from: 1, to: 2, [.copy("Customer", to: "Buyer")])])
            let db = try builder.create()
            #expect(
                try db.recover(Buyer.self) == [
                    Buyer(id: 1, name: "Ann", email: "ann@example.com", vip: false),
                    Buyer(id: 2, name: "Bob", email: "bob@example.com", vip: false),
                ])
            #expect(try db.count(Person1.self) == 3, "entities the mapping model doesn't name are inferred")
        }
    }

    @Test func removeDropsRecordsEvenWhenTheDestinationHasTheEntity() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            var builder = SQLiteBuilder(
                databaseName: "Split", model: Model(version: 2, entities: [Person1.self, Customer.self]))
            builder.directory = directory
            builder.migrationPlan = MigrationPlan(
                models: [Self.v1], mappings: [MappingModel(from: 1, to: 2, [.remove("Customer")])])
            let db = try builder.create()
            #expect(try db.count(Customer.self) == 0)
            #expect(try db.count(Person1.self) == 3)
        }
    }

    struct Scored: Entity, Equatable {
        var id: Int64
        var name: String
        var street: String
        var city: String
        var score: Int
        static var entityName: String { "Person" }
        static let defaultValues: [String: Value] = ["score": 1]
    }

    @Test func anExplicitMappingWinsOverInference() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            // Inference alone would give every score its default, 1.
            let calls = Counter()
            let builder = scoredBuilder(
                directory,
                [
                    "score": .value { source in
                        calls.increment()
                        return (try source.int64("id") ?? 0) * 10
                    }
                ])
            let db = try builder.create()
            #expect(try db.recover(Scored.self).map(\.score) == [10, 20, 30])
            #expect(calls.count == 3, "the closure ran exactly once per record")
            #expect(db.migrationReport?.steps.first?.kind == .mapped)
        }
    }

    @Test func aTransformThatThrowsAtRow500Of1000LeavesTheStoreUnchanged() throws {
        struct Stop: Error {}
        try withTemporaryDirectory { directory in
            try seed(directory, people: 1000)
            let before = try storeBytes(directory, "Split")
            let calls = Counter()
            let builder = scoredBuilder(
                directory,
                [
                    "score": .value { _ in
                        calls.increment()
                        if calls.count == 500 { throw Stop() }
                        return 1
                    }
                ])
            let error = try #require(expectError(.migrationFailed) { try builder.create() })
            #expect(error.underlyingError is Stop)
            #expect(error.message.contains("migration step 1 → 2"), "\(error)")
            #expect(error.message.contains("'Person'"), "\(error)")
            #expect(calls.count == 500)
            #expect(try storeBytes(directory, "Split") == before)
            #expect(
                !FileManager.default.fileExists(atPath: try builder.migrationBackupFile(fromVersion: 1).path),
                "the backup of a failed migration is removed")
            var v1 = SQLiteBuilder(databaseName: "Split", model: Self.v1)
            v1.directory = directory
            #expect(try v1.create().count(Person1.self) == 1000)
        }
    }

    @Test func valuesThatDontFitTheDestinationFailTheMigration() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let before = try storeBytes(directory, "Split")
            var builder = scoredBuilder(directory, ["score": .value { _ in "many" }])
            let wrongType = try #require(expectError(.migrationFailed) { try builder.create() })
            #expect((wrongType.underlyingError as? PersistenceError)?.code == .typeMismatch)
            #expect(wrongType.message.contains("'Person.score'"), "\(wrongType)")
            builder.migrationPlan?.mappings = [
                MappingModel(from: 1, to: 2, [.transform("Person", ["city": .constant(Value.null)])])
            ]
            let missing = try #require(expectError(.migrationFailed) { try builder.create() })
            #expect(missing.message.contains("'Person.city' is not optional"), "\(missing)")
            builder.migrationPlan?.mappings = [
                MappingModel(from: 1, to: 2, [.transform("Person", ["nope": .constant(1)])])
            ]
            expectError(.unknownAttribute) { try builder.create() }
            builder.migrationPlan?.mappings = [MappingModel(from: 1, to: 2, [.transform("Nobody", [:])])]
            expectError(.unknownEntity) { try builder.create() }
            builder.migrationPlan?.mappings = [
                MappingModel(
                    from: 1, to: 2,
                    [
                        .custom(
                            "Person", to: "Person",
                            policy: EntityMigrationPolicy(createDestinationRecords: { source, context in
                                try context.insert(source.record)  // a source record is not a destination record
                            }))
                    ])
            ]
            let foreign = try #require(expectError(.migrationFailed) { try builder.create() })
            #expect((foreign.underlyingError as? PersistenceError)?.code == .invalidArgument)
            #expect(try storeBytes(directory, "Split") == before)
        }
    }

    @Test func aHeavyweightMigrationBacksTheStoreUpFirst() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let db = try builder(directory, Self.everything()).create()
            #expect(try db.count(Contact.self) == 3)
            let backup = try builder(directory, []).migrationBackupFile(fromVersion: 1)
            #expect(backup.lastPathComponent == "Split.v1.sqlite-backup")
            // The backup is a complete store of version 1.
            let copy = directory.appendingPathComponent("Copy")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
            try FileManager.default.copyItem(at: backup, to: copy.appendingPathComponent("Split.sqlite"))
            var v1 = SQLiteBuilder(databaseName: "Split", model: Self.v1)
            v1.directory = copy
            let old = try v1.create()
            #expect(try old.count(Person1.self) == 3)
            #expect(try old.count(Customer.self) == 2)
            #expect(
                try contents(of: directory) == [
                    "Copy", "Split.sqlite", "Split.sqlite-shm", "Split.sqlite-wal", "Split.v1.sqlite-backup",
                ])
        }
        try withTemporaryDirectory { directory in
            try seed(directory)
            var noBackup = builder(directory, Self.everything())
            noBackup.backsUpBeforeHeavyweightMigration = false
            _ = try noBackup.create()
            #expect(!FileManager.default.fileExists(atPath: try noBackup.migrationBackupFile(fromVersion: 1).path))
        }
    }

    @Test func aDryRunReportsEachStepAndLeavesTheStoreUntouched() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let before = try storeBytes(directory, "Split")
            let dryRun = builder(
                directory, [.custom("Person", to: "Person", policy: Self.split(stages: StageLog())), .add("Address")])
            let report = try #require(try dryRun.dryRunMigration())
            #expect(report.fromVersion == 1 && report.toVersion == 2)
            let step = try #require(report.steps.first)
            #expect(step.kind == .mapped)
            let counts = Dictionary(uniqueKeysWithValues: step.entities.map { ($0.name, $0) })
            #expect(counts["Person"]?.recordsBefore == 3 && counts["Person"]?.recordsAfter == 3)
            #expect(counts["Address"]?.recordsAfter == 3)
            #expect(counts["Customer"]?.recordsBefore == 2 && counts["Customer"]?.recordsAfter == 0)
            #expect(counts["Contact"]?.recordsAfter == 0, "no mapping fills contacts: inferred as added, empty")
            #expect(try storeBytes(directory, "Split") == before)
            let files = try contents(of: directory)
            #expect(files == ["Split.sqlite"], "\(files)")
            // The real run agrees with the dry run.
            #expect(try dryRun.create().migrationReport == report)
        }
    }

    @Test func cancellingAnAsyncOpenRollsTheMigrationBack() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try seed(directory, people: 2500)
        let canceller = TaskCanceller()
        var cancelled = builder(directory, Self.everything())
        cancelled.migrationProgress = { progress in
            if progress.completed >= 1000 { canceller.cancel() }
        }
        let opening = Task { _ = try await cancelled.open() }
        canceller.set(opening)
        await #expect(throws: CancellationError.self) { try await opening.value }
        // Nothing of it stayed: the next open migrates from version 1, all of it.
        let db = try builder(directory, Self.everything()).create()
        #expect(db.migrationReport?.fromVersion == 1)
        #expect(try db.count(Person2.self) == 2500)
        // An async open that isn't cancelled opens the migrated store.
        try db.close()
        let reopened = try await builder(directory, Self.everything()).open()
        #expect(try reopened.count(Person2.self) == 2500)
    }

    @Test func progressNamesTheStepTheEntityAndTheRecords() throws {
        try withTemporaryDirectory { directory in
            try seed(directory, people: 2500)
            let reports = Mutex<[MigrationProgress]>([])
            var builder = builder(directory, Self.everything())
            builder.migrationProgress = { progress in reports.withLock { $0.append(progress) } }
            _ = try builder.create()
            var passes: [String: [Int]] = [:]
            for progress in reports.withLock({ $0 }) {
                #expect(progress.step == 1...2)
                passes["\(progress.entity) \(progress.stage) of \(progress.total)", default: []].append(
                    progress.completed)
            }
            #expect(
                passes == [
                    "Person mapping of 2500": [0, 1000, 2000, 2500],
                    // The people and addresses the first stage created.
                    "Person fixingReferences of 5000": [0, 1000, 2000, 3000, 4000, 5000],
                    // Customers, then clients.
                    "Contact mapping of 2": [0, 2, 0, 2],
                ])
        }
    }
}

/// The stages a policy ran, in order.
final class StageLog: Sendable {
    private let log = Mutex<[String]>([])
    func append(_ entry: String) { log.withLock { $0.append(entry) } }
    var entries: [String] { log.withLock { $0 } }
}
