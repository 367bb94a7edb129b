import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceTesting
import Testing

/// An app's history written once — one `MigrationPlan`, and separately one migration block — migrates a version-1
/// store to version 3 on SQLite, LMDB plain, LMDB encrypted and PostgreSQL with identical records and reports:
/// swapping the builder line changes nothing a migration does.
@Suite("one migration, every backend")
struct MigrationOnEveryBackendTests {
    /// 1 → 2: `name` becomes `fullName` (a mapping: version 2 doesn't declare the rename); 2 → 3: the name split in
    /// two, the age parsed, the address merged, `Legacy` removed.
    static let plan = MigrationPlan(
        models: [BlockPeopleV1.model, BlockPeopleV2.model],
        mappings: [
            MappingModel(from: 1, to: 2, [.transform("Person", ["fullName": .attribute("name")])]),
            MappingModel(
                from: 2, to: 3,
                [
                    .transform(
                        "Person",
                        [
                            "firstName": .value { source in
                                String((try source.string("fullName") ?? "").split(separator: " ").first ?? "")
                            },
                            "lastName": .value { source in
                                String((try source.string("fullName") ?? "").split(separator: " ").last ?? "")
                            },
                            "age": .value { source in Int(try source.string("age") ?? "") ?? -1 },
                            "address": .value { source in
                                "\(try source.int("number") ?? 0) \(try source.string("street") ?? "")"
                            },
                        ]),
                    .remove("Legacy"),
                ]),
        ])

    /// What a migration left: its report, and every record of version 3.
    struct Outcome: Equatable, CustomStringConvertible {
        var report: MigrationReport?
        var people: [BlockPeopleV3.Person]
        var pets: [BlockPeopleV3.Pet]
        var description: String { "\(report?.description ?? "no report"); \(people.count) people, \(pets.count) pets" }
    }

    /// Seeds a version-1 store through `builder(model)`, then opens it at version 3 through the builder `prepare`
    /// gives a plan or a block.
    static func migrate<B: MigratingDatabaseBuilder>(
        _ builder: (Model) throws -> B, _ prepare: (inout B) -> Void
    ) throws -> Outcome {
        let seeded = try builder(BlockPeopleV1.model).create()
        try BlockPeopleV1.seed(seeded, count: 60)
        try seeded.close()
        var migrating = try builder(BlockPeopleV3.model)
        prepare(&migrating)
        let db = try migrating.create()
        defer { try? db.close() }
        #expect(try db.verify().isSound)
        return Outcome(report: db.migrationReport, people: try db.recover(), pets: try db.recover())
    }

    /// The same migration on the four configurations, each store new.
    static func everywhere(
        _ directory: URL, _ name: String, plan: MigrationPlan?, block: MigrationBlock?
    ) throws -> [String: Outcome] {
        func prepare<B: MigratingDatabaseBuilder>(_ builder: inout B) {
            builder.migrationPlan = plan
            builder.migrationBlock = block
        }
        var outcomes: [String: Outcome] = [:]
        outcomes["SQLite"] = try migrate(
            { model in
                var builder = SQLiteBuilder(databaseName: name, model: model)
                builder.directory = directory
                builder.backsUpBeforeHeavyweightMigration = false
                return builder
            }, prepare)
        outcomes["LMDB plain"] = try migrate(
            { model in
                var builder = LMDBBuilder.unencrypted(databaseName: name + "-plain", model: model)
                builder.directory = directory
                return builder
            }, prepare)
        outcomes["LMDB encrypted"] = try migrate(
            { model in
                var builder = LMDBBuilder(databaseName: name + "-sealed", passphrase: "people", model: model)
                builder.directory = directory
                builder.keyDerivation = .argon2id(iterations: 1, memoryKiB: 64)
                return builder
            }, prepare)
        outcomes["PostgreSQL"] = try migrate(
            { model in
                var builder = try PostgresBuilder(url: serverURL(), model: model)
                builder.schema = PostgresConformance.prefix(directory) + name
                return builder
            }, prepare)
        return outcomes
    }

    static func expectIdentical(_ outcomes: [String: Outcome]) throws {
        let sqlite = try #require(outcomes["SQLite"])
        for (configuration, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            #expect(outcome == sqlite, "\(configuration): \(outcome) — SQLite: \(sqlite)")
        }
        #expect(sqlite.people.count == 60)
        let first = try #require(sqlite.people.first)
        #expect(
            [first.firstName, first.lastName, first.address] == ["Ada1", "Lovelace1", "1 Main St"] && first.age == 21
                && first.karma == 10, "\(first)")
    }

    @Test func oneMigrationPlan() throws {
        try withTemporaryDirectory { directory in
            let outcomes = try Self.everywhere(directory, "planned", plan: Self.plan, block: nil)
            try Self.expectIdentical(outcomes)
            let report = try #require(outcomes["SQLite"]?.report)
            #expect(report.steps.map(\.kind) == [.mapped, .mapped])
            #expect(outcomes["SQLite"]?.pets.isEmpty == true)
        }
    }

    @Test func oneMigrationBlock() throws {
        try withTemporaryDirectory { directory in
            let outcomes = try Self.everywhere(directory, "blocked", plan: nil, block: BlockPeopleV3.migration)
            try Self.expectIdentical(outcomes)
            let report = try #require(outcomes["SQLite"]?.report)
            #expect(report.steps.map(\.kind) == [.mapped])
            #expect(outcomes["SQLite"]?.pets.map(\.owner) == [10, 20, 30, 40, 50, 60])
        }
    }
}
