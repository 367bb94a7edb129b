import Foundation
import PersistenceCore
import PersistenceSQLite
import Synchronization

// Four shipped versions of one app's model, as an app keeps them: each version's entity types in a namespace.
//
// 1 → 2 inferred: Person.name renamed fullName, `active` added with a default, the name index follows the rename;
//                 entity Tag added.
// 2 → 3 mapped:   Person.age text → integer (a transform), `email` no longer optional (its default fills nil),
//                 `city` looked up in Address, which is removed; `rank` added with a default.
// 3 → 4 inferred: Person.rank integer → double (widening), an index on age; Tag renamed Label.

enum V1 {
    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        var age: String
        var email: String?
        static let indexes: [Index] = [.on("name")]
    }
    struct Address: Entity, Equatable {
        var id: Int64
        var personID: Int64
        var city: String
    }
    static let model = Model(version: 1, entities: [Person.self, Address.self])
}

enum V2 {
    struct Person: Entity, Equatable {
        var id: Int64
        var fullName: String
        var age: String
        var email: String?
        var active: Bool
        static let indexes: [Index] = [.on("fullName")]
        static let defaultValues: [String: Value] = ["active": true]
        static let previousAttributeNames = ["fullName": "name"]
    }
    typealias Address = V1.Address
    struct Tag: Entity, Equatable {
        var id: Int64
        var label: String
    }
    static let model = Model(version: 2, entities: [Person.self, Address.self, Tag.self])
}

enum V3 {
    struct Person: Entity, Equatable {
        var id: Int64
        var fullName: String
        var age: Int
        var email: String
        var active: Bool
        var city: String?
        var rank: Int
        static let indexes: [Index] = [.on("fullName")]
        static let defaultValues: [String: Value] = ["email": "", "rank": 0]
    }
    typealias Tag = V2.Tag
    static let model = Model(version: 3, entities: [Person.self, Tag.self])
}

enum V4 {
    struct Person: Entity, Equatable {
        var id: Int64
        var fullName: String
        var age: Int
        var email: String
        var active: Bool
        var city: String?
        var rank: Double
        static let indexes: [Index] = [.on("fullName"), .on("age")]
    }
    struct Label: Entity, Equatable {
        var id: Int64
        var label: String
        static let previousName = "Tag"
    }
    static let model = Model(version: 4, entities: [Person.self, Label.self])
}

/// The 2 → 3 mapping model: parses the age, looks up each person's city in Address.
let mapping2to3 = MappingModel(
    from: 2, to: 3,
    [
        .transform(
            "Person",
            [
                "age": .value { source in Int(try source.string("age") ?? "") ?? -1 },
                "city": .value { source in
                    try source.context.sourceRecords("Address", where: Field("personID") == (try source["id"]))
                        .first?.string("city")
                },
            ]),
        .remove("Address"),
    ])

/// The app's plan at version 4.
let peoplePlan = MigrationPlan(models: [V1.model, V2.model, V3.model], mappings: [mapping2to3])

func peopleBuilder(_ directory: URL, _ model: Model, plan: MigrationPlan? = peoplePlan) -> SQLiteBuilder {
    var builder = SQLiteBuilder(databaseName: "People", model: model)
    builder.directory = directory
    builder.migrationPlan = plan
    return builder
}

/// Counts calls from `@Sendable` closures.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// The bytes of a store's file (the database closed: its WAL is checkpointed and removed).
func storeBytes(_ directory: URL, _ name: String = "People") throws -> Data {
    try Data(contentsOf: directory.appendingPathComponent("\(name).sqlite"))
}
