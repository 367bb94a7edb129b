public import PersistenceCore

/// Three versions of an app's model for the migration-block checks, as an app keeps them — each version's types in
/// its own namespace — with the blocks the v2 and v3 apps ship (Realm's example, grown: a rename, a split, a type
/// change, a merge, objects created and an entity's data deleted).
public enum BlockPeopleV1 {
    public struct Person: Entity, Equatable {
        public var id: Int64
        public var name: String
        public var age: String
        public var street: String
        public var number: Int
        public static var entityName: String { "Person" }
        public static let indexes: [Index] = [.on("name")]
    }

    public struct Legacy: Entity {
        public var id: Int64
        public var blob: String
    }

    public static let model = Model(version: 1, entities: [Person.self, Legacy.self])

    /// `count` people and one legacy record, in one write.
    public static func seed(_ db: any Database, count: Int) throws {
        try db.write { context in
            for id in 1...count {
                try context.create(
                    Person(
                        id: Int64(id), name: "Ada\(id) Lovelace\(id)", age: "\(20 + id % 50)", street: "Main St",
                        number: id))
            }
            try context.create(Legacy(id: 1, blob: "legacy"))
        }
    }
}

public enum BlockPeopleV2 {
    public struct Person: Entity, Equatable {
        public var id: Int64
        public var fullName: String
        public var age: String
        public var street: String
        public var number: Int
        public var karma: Int
        public static var entityName: String { "Person" }
        public static let indexes: [Index] = [.on("fullName")]
        public static let defaultValues: [String: Value] = ["karma": 10]
    }

    public static let model = Model(version: 2, entities: [Person.self, BlockPeopleV1.Legacy.self])

    /// The block a v2 app ships: rename.
    public static let migration: MigrationBlock = { migration, oldSchemaVersion in
        if oldSchemaVersion < 2 {
            try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
        }
    }
}

public enum BlockPeopleV3 {
    public struct Person: Entity, Equatable {
        public var id: Int64
        public var firstName: String
        public var lastName: String
        public var age: Int
        public var address: String
        public var karma: Int
        public static var entityName: String { "Person" }
        public static let indexes: [Index] = [.on("lastName"), .on("age")]
        public static let defaultValues: [String: Value] = ["karma": 10]
    }

    public struct Pet: Entity, Equatable {
        public var id: Int64
        public var owner: Int64
        public var name: String
    }

    public static let model = Model(version: 3, entities: [Person.self, Pet.self])

    /// The block a v3 app ships: one closure for every older version.
    public static let migration: MigrationBlock = { migration, oldSchemaVersion in
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
