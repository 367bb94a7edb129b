import Foundation
import PersistenceCore
import Synchronization

// The migration suite's models. Each version's entity types live in a namespace, as an app keeps its shipped
// models.

// MARK: - Four shipped versions of one app's model

// 1 → 2 inferred: Person.name renamed fullName, `active` added with a default, the name index follows the rename;
//                 entity Tag added.
// 2 → 3 mapped:   Person.age text → integer (a transform), `email` no longer optional (its default fills nil),
//                 `city` looked up in Address, which is removed; `rank` added with a default.
// 3 → 4 inferred: Person.rank integer → double (widening), an index on age; Tag renamed Label.

enum PeopleV1 {
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

enum PeopleV2 {
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
    typealias Address = PeopleV1.Address
    struct Tag: Entity, Equatable {
        var id: Int64
        var label: String
    }
    static let model = Model(version: 2, entities: [Person.self, Address.self, Tag.self])
}

enum PeopleV3 {
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
    typealias Tag = PeopleV2.Tag
    static let model = Model(version: 3, entities: [Person.self, Tag.self])
}

enum PeopleV4 {
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

    /// The 2 → 3 mapping model: parses the age, looks up each person's city in Address.
    static let mapping2to3 = MappingModel(
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
    static let plan = MigrationPlan(
        models: [PeopleV1.model, PeopleV2.model, PeopleV3.model], mappings: [mapping2to3])
}

// MARK: - One entity and the versions each lightweight rule makes of it

enum ItemV1 {
    struct Item: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static let indexes: [Index] = [.on("name")]
    }

    /// Three items, one with a `nil` note.
    static let items = [
        Item(id: 1, name: "one", note: "n1", count: 10, flag: true),
        Item(id: 2, name: "two", note: nil, count: 20, flag: false),
        Item(id: 3, name: "three", note: "n3", count: 30, flag: true),
    ]
}

enum ItemV2 {
    struct AddedAttributes: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        var added: String?
        var score: Int
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
        static let defaultValues: [String: Value] = ["score": 5]
    }

    struct RemovedAttribute: Entity, Equatable {
        var id: Int64
        var name: String
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    struct RenamedAttribute: Entity, Equatable {
        var id: Int64
        var title: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("title")]
        static let previousAttributeNames = ["title": "name"]
    }

    struct RenamedEntity: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Thing" }
        static let indexes: [Index] = [.on("name")]
        static let previousName = "Item"
    }

    /// Two attributes renamed into each other's names and the entity renamed, in one step.
    struct Swapped: Entity, Equatable {
        var id: Int64
        var note: String
        var name: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Swapped" }
        static let previousName = "Item"
        static let indexes: [Index] = [.on("note")]
        static let previousAttributeNames = ["note": "name", "name": "note"]
    }

    struct Other: Entity, Equatable {
        var id: String
        var value: Double
    }

    struct NowRequired: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
        static let defaultValues: [String: Value] = ["note": "none"]
    }

    struct NowOptional: Entity, Equatable {
        var id: Int64
        var name: String?
        var note: String?
        var count: Int32?
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    struct Indexed: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.unique("name"), .on("count", "flag")]
    }

    struct Widened: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Double
        var flag: Int
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    struct Int64Count: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int64
        var flag: Bool
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
    }

    struct Narrowed: Entity, Equatable {
        var id: Int64
        var name: Int
        var note: String?
        var count: Int32
        var flag: Bool
        var required: String
        static var entityName: String { "Item" }
    }
}

/// Every attribute type, at version 1 and at a version 2 that adds an attribute and renames one: values must come
/// through a migration bit for bit.
enum EveryTypeV2 {
    struct AllTypes: Entity, Equatable {
        var id: Int64
        var bool: Bool
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint8: UInt8
        var uint16: UInt16
        var uint32: UInt32
        var uint64: UInt64
        var double: Double
        var float: Float
        var text: String
        var data: Data
        var date: Date
        var uuid: UUID
        var url: URL
        var mood: PersistenceTesting.AllTypes.Mood
        var level: PersistenceTesting.AllTypes.Level
        var address: PersistenceTesting.AllTypes.Address
        var tags: [String]
        var optionalString: String?
        var optionalInt: Int?
        var optionalDouble: Double?
        var optionalData: Data?
        var optionalDate: Date?
        var optionalUUID: UUID?
        var optionalMood: PersistenceTesting.AllTypes.Mood?
        var optionalAddress: PersistenceTesting.AllTypes.Address?
        var added: Int
        static let defaultValues: [String: Value] = ["added": 3]
        static let previousAttributeNames = ["text": "string"]
    }
}

extension EveryTypeV2.AllTypes {
    init(_ value: PersistenceTesting.AllTypes) {
        self.init(
            id: value.id, bool: value.bool, int: value.int, int8: value.int8, int16: value.int16,
            int32: value.int32, int64: value.int64, uint8: value.uint8, uint16: value.uint16,
            uint32: value.uint32, uint64: value.uint64, double: value.double, float: value.float,
            text: value.string, data: value.data, date: value.date, uuid: value.uuid, url: value.url,
            mood: value.mood, level: value.level, address: value.address, tags: value.tags,
            optionalString: value.optionalString, optionalInt: value.optionalInt,
            optionalDouble: value.optionalDouble, optionalData: value.optionalData,
            optionalDate: value.optionalDate, optionalUUID: value.optionalUUID, optionalMood: value.optionalMood,
            optionalAddress: value.optionalAddress, added: 3)
    }
}

// MARK: - Splitting and merging entities with mapping models

enum ContactsV1 {
    // People with their address inline, and two kinds of contacts.
    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        var street: String
        var city: String
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
    static let model = Model(version: 1, entities: [Person.self, Customer.self, Client.self])

    /// Writes `people` people, two customers and two clients (one sharing a customer's email).
    static func seed(_ db: some Database, people: Int = 3) throws {
        try db.create((1...people).map { Person(id: Int64($0), name: "p\($0)", street: "s\($0)", city: "c\($0)") })
        try db.create([
            Customer(id: 1, name: "Ann", email: "ann@example.com"),
            Customer(id: 2, name: "Bob", email: "bob@example.com"),
        ])
        try db.create([
            Client(id: 7, title: "Ann (client)", email: "ann@example.com"),
            Client(id: 8, title: "Cy", email: "cy@example.com"),
        ])
    }
}

enum ContactsV2 {
    // Addresses split out of people; customers and clients merged into contacts by email.
    struct Person: Entity, Equatable {
        var id: Int64
        var name: String
        var addressID: Int64
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
    static let model = Model(version: 2, entities: [Person.self, Address.self, Contact.self, Summary.self])

    /// People as version 1 had them, with a score added (default 1).
    struct Scored: Entity, Equatable {
        var id: Int64
        var name: String
        var street: String
        var city: String
        var score: Int
        static var entityName: String { "Person" }
        static let defaultValues: [String: Value] = ["score": 1]
    }

    struct Buyer: Entity, Equatable {
        var id: Int64
        var name: String
        var email: String
        var vip: Bool
        static let defaultValues: [String: Value] = ["vip": false]
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
                guard let first = address.first else {
                    throw PersistenceError(.notFound, "no address for person \(destination.primaryKey)")
                }
                try destination.set("addressID", to: first.primaryKey)
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

    /// A plan of one step, 1 → 2, with these entity mappings.
    static func plan(_ mappings: [EntityMapping]) -> MigrationPlan {
        MigrationPlan(models: [ContactsV1.model], mappings: [MappingModel(from: 1, to: 2, mappings)])
    }
}

// MARK: - Recording from closures

/// Counts calls from `@Sendable` closures.
final class CallCounter: Sendable {
    private let value = Mutex(0)
    /// Adds one call; returns the count with it.
    @discardableResult func increment() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

/// The stages a policy ran, in order.
final class StageLog: Sendable {
    private let log = Mutex<[String]>([])
    func append(_ entry: String) { log.withLock { $0.append(entry) } }
    var entries: [String] { log.withLock { $0 } }
}

/// Collects what `@Sendable` closures hand over.
final class Collected<Element: Sendable>: Sendable {
    private let elements = Mutex<[Element]>([])
    func append(_ element: Element) { elements.withLock { $0.append(element) } }
    var all: [Element] { elements.withLock { $0 } }
}

extension ItemV1 {
    /// Seeds the store `Items` with ``items`` and two aliases: `favourite` (item 2) and `top` (items 3 and 1).
    static func seedWithAliases(_ stores: MigrationStores) throws {
        try stores.seed("Items", Model(version: 1, entities: [Item.self])) { db in
            try db.create(items)
            try db.write { context in
                try context.setAlias("favourite", to: Item.self, id: 2)
                try context.setAlias("top", to: Item.self, ids: [3, 1])
            }
        }
    }
}

extension ItemV2.RenamedEntity {
    /// The aliases ``ItemV1/seedWithAliases(_:)`` set, read as records of the renamed entity.
    static func aliases(in database: any Database) throws -> (favourite: Self?, top: [Self]) {
        try database.read { context in
            (try context.alias("favourite", as: Self.self), try context.aliasList("top", as: Self.self))
        }
    }
}
