import Foundation
import PersistenceCore
import Synchronization
import Testing

@testable import PersistencePostgres

// The worker's `MigratingItem` at version 1, as the tests write it (same entity name and attributes).
enum MigratingV1 {
    struct MigratingItem: Entity {
        var id: Int64
        var value: String
    }
}

/// Version 2, as the worker declares it.
struct MigratingItem: Entity, Equatable {
    var id: Int64
    var value: Int64
    var note: String?
    static let indexes: [Index] = [.on("value")]
}

/// Entities whose names use all 63 bytes PostgreSQL allows: a migration's new tables and their primary-key
/// indexes must not carry them, and must end under the entities' names.
enum LongNamesV1 {
    struct Item: Entity {
        static var entityName: String { String(repeating: "e", count: 63) }
        var id: Int64
        var label: String
    }
}

enum LongNamesV2 {
    struct Item: Entity, Equatable {
        static var entityName: String { String(repeating: "e", count: 63) }
        var id: Int64
        var label: String
        var rank: Int64
        static let defaultValues: [String: Value] = ["rank": 7]
    }
}

/// A change an inferred step makes in place: an entity renamed, an attribute renamed, one dropped, two added (one
/// with a default), an optional one made required with a default for nil, indexes changed.
enum InPlaceV1 {
    struct Person: Entity {
        var id: Int64
        var name: String
        var nickname: String?
        var age: Int64
        var obsolete: String?
        static let indexes: [Index] = [.on("name"), .on("age")]
    }
}

enum InPlaceV2 {
    struct Member: Entity, Equatable {
        var id: Int64
        var fullName: String
        var nickname: String
        var age: Int64
        var active: Bool
        var note: String?
        static let indexes: [Index] = [.on("fullName"), .unique("age")]
        static let defaultValues: [String: Value] = ["nickname": "none", "active": true]
        static let previousAttributeNames = ["fullName": "name"]
        static let previousName = "Person"
    }
}

@Suite(.serialized) struct PostgresMigrationTests {
    /// A fresh schema with `count` version-1 items (`value` the text of `id`), and a builder for it.
    private func versionOneStore(_ count: Int) throws -> PostgresBuilder {
        let builder = try freshBuilder([MigratingV1.MigratingItem.self], "m")
        let db = try builder.create()
        try db.write { context in
            try context.create((1...Int64(count)).map { MigratingV1.MigratingItem(id: $0, value: String($0)) })
        }
        try db.close()
        return builder
    }

    @Test(.timeLimit(.minutes(3))) func threeServersStartingAtOnceMigrateOnce() async throws {
        try await offPool(Self.threeServersStartingAtOnceMigrateOnce)
    }

    static func threeServersStartingAtOnceMigrateOnce() throws {
        let count = 5_000
        let builder = try PostgresMigrationTests().versionOneStore(count)
        let arguments = ["postgres-migrate", "--url", try serverURL(), "--schema", builder.schema]
        let results = try runWorkers([arguments, arguments, arguments])
        for result in results { #expect(result.status == 0, "\(result.errors)") }
        let outputs = results.map { $0.output.split(separator: "\n").map(String.init) }
        // Exactly one ran the migration, rewriting every record once; the others waited and found it done.
        #expect(outputs.filter { $0.first == "migrated 1 2 \(count)" }.count == 1, "\(outputs)")
        #expect(outputs.filter { $0.first == "opened" }.count == 2, "\(outputs)")
        // Every process read the migrated data.
        let sum = (1...count).reduce(0, +)
        for output in outputs { #expect(output.last == "records \(count) \(sum)", "\(output)") }

        var current = try PostgresBuilder(
            url: try serverURL(), model: Model(version: 2, entities: [MigratingItem.self]))
        current.schema = builder.schema
        let db = try current.create()
        #expect(db.migrationReport == nil)
        #expect(try db.verify().isSound)
        #expect(try db.read { try $0.recover(MigratingItem.self, id: 42) } == MigratingItem(id: 42, value: 42))
        // The new index is there and used by queries.
        #expect(try db.read { try $0.count(MigratingItem.self, where: Field("value") >= Int64(count - 9)) } == 10)
    }

    @Test func aServerWaitsForAnotherServersMigrationBeyondItsStatementTimeout() async throws {
        try await offPool {
            let builder = try PostgresMigrationTests().versionOneStore(10)
            // Another server holds the store's lock, as it would while it migrates, for a second.
            let holder = try builder.create()
            let held = DispatchSemaphore(value: 0)
            let holding = Thread {
                try? holder.write { context in
                    _ = try context.execute(
                        "SELECT pg_advisory_xact_lock($1)",
                        [.integer(PostgresSchemaStore.lockKey(schema: builder.schema))])
                    held.signal()
                    Thread.sleep(forTimeInterval: 1)
                }
                held.signal()
            }
            holding.start()
            held.wait()
            var current = try PostgresBuilder(
                url: try serverURL(), model: Model(version: 2, entities: [MigratingItem.self]))
            current.schema = builder.schema
            current.statementTimeout = .milliseconds(300)
            current.migrationPlan = migratingPlan
            let started = ContinuousClock.now
            let db = try current.create()
            #expect(ContinuousClock.now - started > .milliseconds(500))
            held.wait()
            #expect(db.migrationReport?.entities.first?.recordsRewritten == 10)
            #expect(try db.read { try $0.recover(MigratingItem.self, id: 7) } == MigratingItem(id: 7, value: 7))
            // The timeout holds for the app's statements.
            #expect(throws: PersistenceError.self) {
                try db.write { _ = try $0.execute("SELECT pg_sleep(1)") }
            }
        }
    }

    @Test func entitiesWithSixtyThreeByteNamesMigrateAndVerify() async throws {
        try await offPool {
            var builder = try freshBuilder([LongNamesV1.Item.self], "m")
            let db = try builder.create()
            try db.write { try $0.create(LongNamesV1.Item(id: 1, label: "one")) }
            try db.close()
            // A mapped step: the entity gets a new table, whose name and primary-key index can't carry the entity's.
            builder.model = Model(version: 2, entities: [LongNamesV2.Item.self])
            builder.migrationPlan = MigrationPlan(
                models: [Model(version: 1, entities: [LongNamesV1.Item.self])],
                mappings: [
                    MappingModel(from: 1, to: 2, [.transform(LongNamesV2.Item.entityName, ["rank": .value { _ in 7 }])])
                ])
            let migrated = try builder.create()
            #expect(migrated.migrationReport?.steps.first?.kind == .mapped)
            #expect(migrated.migrationReport?.entities.first?.recordsRewritten == 1)
            #expect(try migrated.verify().isSound)
            #expect(
                try migrated.read { try $0.recover(LongNamesV2.Item.self, id: 1) }
                    == LongNamesV2.Item(id: 1, label: "one", rank: 7))
            #expect(
                try migrated.read {
                    try $0.rows(
                        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2",
                        [.text(builder.schema), .text(LongNamesV2.Item.entityName)])
                }
                .map { $0.values.first } == [.text(String(repeating: "e", count: 58) + "_pkey")])
        }
    }

    @Test func anInferredStepChangesTheTableInPlaceWithoutRewritingIt() async throws {
        try await offPool {
            var builder = try freshBuilder([InPlaceV1.Person.self], "m")
            let db = try builder.create()
            try db.write { context in
                try context.create(InPlaceV1.Person(id: 1, name: "Ada", nickname: nil, age: 36, obsolete: "x"))
                try context.create(InPlaceV1.Person(id: 2, name: "Grace", nickname: "Amazing", age: 85, obsolete: nil))
            }
            let file = try relationFile(db, builder.schema, "Person")
            try db.close()

            builder.model = Model(version: 2, entities: [InPlaceV2.Member.self])
            let migrated = try builder.create()
            let report = try #require(migrated.migrationReport)
            #expect(report.steps.map(\.kind) == [.inferred])
            // Only the record whose nil took the new default was written; the table is the same file.
            #expect(report.entities.first { $0.name == "Member" }?.recordsRewritten == 1)
            #expect(try relationFile(migrated, builder.schema, "Member") == file)
            #expect(try migrated.verify().isSound)
            #expect(
                try migrated.read { try $0.recover(InPlaceV2.Member.self, sortedBy: [.ascending("id")]) } == [
                    InPlaceV2.Member(id: 1, fullName: "Ada", nickname: "none", age: 36, active: true, note: nil),
                    InPlaceV2.Member(id: 2, fullName: "Grace", nickname: "Amazing", age: 85, active: true, note: nil),
                ])
            let indexes = try migrated.read {
                try $0.rows(
                    "SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY 1", [.text(builder.schema)])
            }
            #expect(
                indexes.map { $0.values.first } == [
                    .text("Member_pkey"), .text("index_Member_fullName"), .text("persistence_aliases_pkey"),
                    .text("persistence_metadata_pkey"), .text("unique_Member_age"),
                ])
            // The new unique index holds.
            #expect(throws: PersistenceError.self) {
                try migrated.write {
                    try $0.create(InPlaceV2.Member(id: 3, fullName: "Alan", nickname: "", age: 36, active: false))
                }
            }
        }
    }

    @Test func aConnectionDroppedDuringAMigrationIsRetryableAndLeavesTheStoreAsItWas() async throws {
        try await offPool {
            let builder = try PostgresMigrationTests().versionOneStore(1_200)
            let killer = try builder.create()
            let key = PostgresSchemaStore.lockKey(schema: builder.schema)
            var current = try PostgresBuilder(
                url: try serverURL(), model: Model(version: 2, entities: [MigratingItem.self]))
            current.schema = builder.schema
            let calls = Mutex(0)
            let armed = Mutex(true)
            current.migrationPlan = MigrationPlan(
                models: [Model(version: 1, entities: [MigratingV1.MigratingItem.self])],
                mappings: [
                    MappingModel(
                        from: 1, to: 2,
                        [
                            .transform(
                                "MigratingItem",
                                [
                                    "value": .value { source in
                                        let call = calls.withLock {
                                            $0 += 1
                                            return $0
                                        }
                                        if call == 700, armed.withLock({ $0 }) {
                                            // The server ends the migrating connection: the one holding the lock.
                                            _ = try killer.write {
                                                try $0.rows(
                                                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE "
                                                        + "locktype = 'advisory' AND granted AND classid::bigint = $1 "
                                                        + "AND objid::bigint = $2",
                                                    [.integer(key >> 32 & 0xffff_ffff), .integer(key & 0xffff_ffff)])
                                            }
                                        }
                                        return Int64(try source.string("value") ?? "")
                                    }
                                ])
                        ])
                ])
            do {
                _ = try current.create()
                Issue.record("the migration went on after its connection was ended")
            } catch let error as PersistenceError {
                #expect(error.code == .connectionLost, "\(error)")
                #expect(error.isRetryable)
            }
            #expect(try killer.read { try $0.count(MigratingV1.MigratingItem.self) } == 1_200)
            armed.withLock { $0 = false }
            calls.withLock { $0 = 0 }
            let db = try current.create()
            #expect(calls.withLock { $0 } == 1_200)
            #expect(
                try db.read { try $0.recover(MigratingItem.self, id: 1_200) } == MigratingItem(id: 1_200, value: 1_200))
        }
    }

    /// The file a table's rows are in: a rewrite of the table gives it a new one.
    private func relationFile(_ db: PostgresDatabase, _ schema: String, _ table: String) throws -> Value? {
        try db.read {
            try $0.scalar(
                "SELECT relfilenode::bigint FROM pg_class WHERE oid = $1::regclass",
                [.text("\"\(schema)\".\"\(table)\"")])
        }
    }

    @Test func aFailedMigrationLeavesNoTableBehindAndTheNextStartMigrates() async throws {
        try await offPool {
            let builder = try PostgresMigrationTests().versionOneStore(1_200)
            var current = try PostgresBuilder(
                url: try serverURL(), model: Model(version: 2, entities: [MigratingItem.self]))
            current.schema = builder.schema
            let calls = Mutex(0)
            func plan(failAt: Int?) -> MigrationPlan {
                MigrationPlan(
                    models: [Model(version: 1, entities: [MigratingV1.MigratingItem.self])],
                    mappings: [
                        MappingModel(
                            from: 1, to: 2,
                            [
                                .transform(
                                    "MigratingItem",
                                    [
                                        "value": .value { source in
                                            let call = calls.withLock {
                                                $0 += 1
                                                return $0
                                            }
                                            if call == failAt { throw CancellationError() }
                                            return Int64(try source.string("value") ?? "")
                                        }
                                    ])
                            ])
                    ])
            }
            current.migrationPlan = plan(failAt: 1_100)
            #expect(throws: PersistenceError.self) { _ = try current.create() }
            #expect(calls.withLock { $0 } == 1_100)
            let tables = try builder.create().read {
                try $0.rows("SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1", [.text(builder.schema)])
            }
            #expect(
                tables.map { $0.values.first } == [
                    .text("MigratingItem"), .text("persistence_aliases"), .text("persistence_metadata"),
                ])

            current.migrationPlan = plan(failAt: nil)
            calls.withLock { $0 = 0 }
            let db = try current.create()
            #expect(calls.withLock { $0 } == 1_200)
            #expect(try db.verify().isSound)
            #expect(try db.read { try $0.count(MigratingItem.self) } == 1_200)
        }
    }
}

/// The worker's plan: version 1 declared, `value` parsed from its text.
let migratingPlan = MigrationPlan(
    models: [Model(version: 1, entities: [MigratingV1.MigratingItem.self])],
    mappings: [
        MappingModel(
            from: 1, to: 2,
            [.transform("MigratingItem", ["value": .value { source in Int64(try source.string("value") ?? "") }])])
    ])
