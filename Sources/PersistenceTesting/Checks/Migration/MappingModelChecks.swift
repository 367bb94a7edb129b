import Foundation
import PersistenceCore
import Testing

/// Mapping models: each kind of entity mapping, custom policies that split and merge, failures that leave the store
/// as it was, user closures that run exactly once, the dry run, progress and cancellation.
enum MappingModelChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("mapped: a custom policy splits one entity into two, another merges two into one") {
            try splitsAndMerges($0)
        },
        MigrationConformanceCheck("mapped: copy maps an entity under another name") { try copies($0) },
        MigrationConformanceCheck("mapped: remove drops records even when the destination has the entity") {
            try removes($0)
        },
        MigrationConformanceCheck("mapped: an explicit mapping wins over inference, its closure once per record") {
            try explicitMappingWins($0)
        },
        MigrationConformanceCheck("mapped: a transform throwing at record 500 of 1,000 leaves the store as it was") {
            try throwingTransform($0)
        },
        MigrationConformanceCheck("mapped: values that don't fit the destination fail the migration") {
            try valuesThatDontFit($0)
        },
        MigrationConformanceCheck("mapped: a dry run reports each step and leaves the store untouched") {
            try dryRun($0)
        },
        MigrationConformanceCheck("mapped: progress names the step, the entity and the records") {
            try progress($0)
        },
        MigrationConformanceCheck("mapped: cancelling an async open rolls the migration back") {
            try await cancelling($0)
        },
    ]

    static let name = "Split"

    /// Seeds version 1 and opens version 2 with `mappings`.
    static func migrate(
        _ stores: MigrationStores, _ mappings: [EntityMapping], model: Model = ContactsV2.model, people: Int = 3,
        progress: MigrationProgressHandler? = nil
    ) throws -> OpenedStore {
        try stores.seed(name, ContactsV1.model) { try ContactsV1.seed($0, people: people) }
        return try stores.open(name, model, plan: ContactsV2.plan(mappings), progress: progress)
    }

    static func splitsAndMerges(_ stores: MigrationStores) throws {
        let stages = StageLog()
        let opened = try migrate(stores, ContactsV2.everything(stages))
        let db = opened.database
        #expect(
            try db.recover(ContactsV2.Person.self)
                == (1...3).map { ContactsV2.Person(id: Int64($0), name: "p\($0)", addressID: 1000 + Int64($0)) })
        #expect(
            try db.recover(ContactsV2.Address.self)
                == (1...3).map {
                    ContactsV2.Address(id: 1000 + Int64($0), ownerID: Int64($0), street: "s\($0)", city: "c\($0)")
                })
        #expect(
            try db.recover(ContactsV2.Contact.self) == [
                ContactsV2.Contact(id: "ann@example.com", name: "Ann", sources: 2),
                ContactsV2.Contact(id: "bob@example.com", name: "Bob", sources: 1),
                ContactsV2.Contact(id: "cy@example.com", name: "Cy", sources: 1),
            ])
        #expect(try db.recover(ContactsV2.Summary.self) == [ContactsV2.Summary(id: "people", count: 3)])
        // Every record created before any reference is fixed; each created record fixed once; finish once.
        #expect(
            stages.entries
                == Array(repeating: "create", count: 3)
                + Array(repeating: ["fix Person", "fix Address"], count: 3).flatMap { $0 } + ["finish"])
        let tables = try opened.tableNames()
        for table in ["Address", "Contact", "Person", "Summary"] { #expect(tables.contains(table), "\(tables)") }
        for table in ["Customer", "Client"] { #expect(!tables.contains(table), "\(tables)") }
        #expect(try opened.indexNames() == ["unique_Address_ownerID"])
        #expect(try db.verify().isSound)
        #expect(opened.report?.steps.first?.kind == .mapped)
        expectError(.uniqueViolation) {
            try db.create(ContactsV2.Address(id: 1, ownerID: 1, street: "again", city: "again"))
        }
    }

    static func copies(_ stores: MigrationStores) throws {
        let opened = try migrate(
            stores, [.copy("Customer", to: "Buyer")],
            model: Model(version: 2, entities: [ContactsV1.Person.self, ContactsV2.Buyer.self]))
        #expect(
            try opened.database.recover(ContactsV2.Buyer.self) == [
                ContactsV2.Buyer(id: 1, name: "Ann", email: "ann@example.com", vip: false),
                ContactsV2.Buyer(id: 2, name: "Bob", email: "bob@example.com", vip: false),
            ])
        #expect(
            try opened.database.count(ContactsV1.Person.self) == 3,
            "entities the mapping model doesn't name are inferred"
        )
        #expect(!(try opened.tableNames().contains("Customer")))
    }

    static func removes(_ stores: MigrationStores) throws {
        let opened = try migrate(
            stores, [.remove("Customer")],
            model: Model(version: 2, entities: [ContactsV1.Person.self, ContactsV1.Customer.self]))
        #expect(try opened.database.count(ContactsV1.Customer.self) == 0)
        #expect(try opened.database.count(ContactsV1.Person.self) == 3)
        try opened.database.create(ContactsV1.Customer(id: 1, name: "New", email: "new@example.com"))
    }

    /// Version 2 with scored people, the score from `score`.
    static func scored(_ score: AttributeMapping) -> [EntityMapping] {
        [.transform("Person", ["score": score]), .remove("Customer"), .remove("Client")]
    }
    static let scoredModel = Model(version: 2, entities: [ContactsV2.Scored.self])

    static func explicitMappingWins(_ stores: MigrationStores) throws {
        // Inference alone would give every score its default, 1.
        let calls = CallCounter()
        let opened = try migrate(
            stores,
            scored(
                .value { source in
                    calls.increment()
                    return (try source.int64("id") ?? 0) * 10
                }), model: scoredModel)
        #expect(try opened.database.recover(ContactsV2.Scored.self).map(\.score) == [10, 20, 30])
        #expect(calls.count == 3, "the closure ran exactly once per record")
        #expect(opened.report?.steps.first?.kind == .mapped)
    }

    static func throwingTransform(_ stores: MigrationStores) throws {
        struct Stop: Error {}
        try stores.seed(name, ContactsV1.model) { try ContactsV1.seed($0, people: 1000) }
        let before = try stores.fingerprint(name)
        let calls = CallCounter()
        let failing = scored(
            .value { _ in
                if calls.increment() == 500 { throw Stop() }
                return 1
            })
        let error = expectError(.migrationFailed) {
            try stores.open(name, scoredModel, plan: ContactsV2.plan(failing))
        }
        #expect(error?.underlyingError is Stop)
        #expect(error?.message.contains("migration step 1 → 2") == true, "\(String(describing: error))")
        #expect(error?.message.contains("'Person'") == true, "\(String(describing: error))")
        #expect(calls.count == 500, "no record mapped twice, none after the failure")
        #expect(try stores.fingerprint(name) == before)
        #expect(try stores.storeNames() == [name])
        // The store still opens at version 1, whole.
        do {
            let old = try stores.open(name, ContactsV1.model)
            #expect(try old.database.count(ContactsV1.Person.self) == 1000)
            #expect(try old.database.count(ContactsV1.Customer.self) == 2)
            try old.database.close()
        }
        // The next start, with the mistake fixed, migrates every record once.
        let fixedCalls = CallCounter()
        let fixed = try stores.open(
            name, scoredModel,
            plan: ContactsV2.plan(
                scored(
                    .value { source in
                        fixedCalls.increment()
                        return try source.int64("id") ?? 0
                    })))
        #expect(fixedCalls.count == 1000)
        #expect(try fixed.database.count(ContactsV2.Scored.self, where: Field("score") == 500) == 1)
    }

    static func valuesThatDontFit(_ stores: MigrationStores) throws {
        try stores.seed(name, ContactsV1.model) { try ContactsV1.seed($0) }
        let before = try stores.fingerprint(name)
        func open(_ mappings: [EntityMapping]) throws {
            _ = try stores.open(name, scoredModel, plan: ContactsV2.plan(mappings))
        }
        let wrongType = expectError(.migrationFailed) { try open(scored(.value { _ in "many" })) }
        #expect((wrongType?.underlyingError as? PersistenceError)?.code == .typeMismatch)
        #expect(wrongType?.message.contains("'Person.score'") == true, "\(String(describing: wrongType))")
        let missing = expectError(.migrationFailed) {
            try open([.transform("Person", ["city": .constant(Value.null)]), .remove("Customer"), .remove("Client")])
        }
        #expect(missing?.message.contains("'Person.city' is not optional") == true, "\(String(describing: missing))")
        expectError(.unknownAttribute) { try open([.transform("Person", ["nope": .constant(1)])]) }
        expectError(.unknownEntity) { try open([.transform("Nobody", [:])]) }
        let foreign = expectError(.migrationFailed) {
            try open([
                .custom(
                    "Person", to: "Person",
                    policy: EntityMigrationPolicy(createDestinationRecords: { source, context in
                        try context.insert(source.record)  // a source record is not a destination record
                    }))
            ])
        }
        #expect((foreign?.underlyingError as? PersistenceError)?.code == .invalidArgument)
        #expect(try stores.fingerprint(name) == before)
    }

    static func dryRun(_ stores: MigrationStores) throws {
        try stores.seed(name, ContactsV1.model) { try ContactsV1.seed($0) }
        let before = try stores.fingerprint(name)
        let calls = CallCounter()
        let plan = ContactsV2.plan([
            .custom("Person", to: "Person", policy: ContactsV2.split(stages: StageLog())), .add("Address"),
            .transform(
                "Customer", to: "Contact",
                [
                    "id": .attribute("email"),
                    "sources": .value { _ in
                        calls.increment()
                        return 1
                    },
                ]),
        ])
        let report = try #require(try stores.dryRun(name, ContactsV2.model, plan: plan))
        #expect(report.fromVersion == 1 && report.toVersion == 2)
        let step = try #require(report.steps.first)
        #expect(step.kind == .mapped)
        let counts = Dictionary(uniqueKeysWithValues: step.entities.map { ($0.name, $0) })
        #expect(counts["Person"]?.recordsBefore == 3 && counts["Person"]?.recordsAfter == 3)
        #expect(counts["Address"]?.recordsAfter == 3)
        #expect(counts["Customer"]?.recordsBefore == 2 && counts["Customer"]?.recordsAfter == 0)
        #expect(counts["Contact"]?.recordsAfter == 2)
        #expect(counts["Client"]?.recordsBefore == 2 && counts["Client"]?.recordsAfter == 0)
        #expect(counts["Summary"]?.recordsAfter == 1)
        #expect(try stores.fingerprint(name) == before)
        #expect(try stores.storeNames() == [name])
        #expect(calls.count == 2)
        // The real run agrees with the dry run.
        let opened = try stores.open(name, ContactsV2.model, plan: plan)
        #expect(opened.report == report)
        #expect(calls.count == 4)
        #expect(try opened.database.count(ContactsV2.Contact.self) == 2)
    }

    static func progress(_ stores: MigrationStores) throws {
        let reports = Collected<MigrationProgress>()
        _ = try migrate(stores, ContactsV2.everything(), people: 2500, progress: { reports.append($0) })
        var passes: [String: [Int]] = [:]
        for progress in reports.all {
            #expect(progress.step == 1...2)
            passes["\(progress.entity) \(progress.stage) of \(progress.total)", default: []].append(progress.completed)
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

    static func cancelling(_ stores: MigrationStores) async throws {
        try stores.seed(name, ContactsV1.model) { try ContactsV1.seed($0, people: 2500) }
        let before = try stores.fingerprint(name)
        let canceller = TaskCanceller()
        let opening = Task {
            _ = try await stores.openAsync(
                name, ContactsV2.model, plan: ContactsV2.plan(ContactsV2.everything()),
                progress: { progress in if progress.completed >= 1000 { canceller.cancel() } })
        }
        canceller.set(opening)
        await #expect(throws: CancellationError.self) { try await opening.value }
        #expect(try stores.fingerprint(name) == before)
        // Nothing of it stayed: the next open migrates from version 1, all of it.
        let report = try await stores.openAsync(name, ContactsV2.model, plan: ContactsV2.plan(ContactsV2.everything()))
        #expect(report?.fromVersion == 1)
        let opened = try stores.open(name, ContactsV2.model, plan: ContactsV2.plan(ContactsV2.everything()))
        #expect(opened.report == nil)
        #expect(try opened.database.count(ContactsV2.Person.self) == 2500)
    }
}
