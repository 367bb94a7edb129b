import PersistenceLMDB
import PersistenceSQLite

/// The records of the migration kill test at schema version 1: every field follows from the id.
struct MigrantV1: Entity, Equatable {
    var id: Int64
    var name: String
    var amount: String
    var note: String
    static var entityName: String { "Migrant" }
    static let indexes: [Index] = [.on("name")]

    static let model = Model(version: 1, entities: [MigrantV1.self])

    /// Notes vary in length, and every 50th is long enough for LMDB's overflow pages.
    static func expected(_ id: Int64) -> MigrantV1 {
        MigrantV1(
            id: id, name: "name \(id)", amount: String(id * 7 % 1000),
            note: "note \(id) " + String(repeating: "n", count: id % 50 == 0 ? 2500 : Int(id % 200)))
    }
}

/// The same records at schema version 2: `name` renamed `fullName`, `amount` parsed from text to an integer, and
/// `flag` added with a default (the rename declared for SQLite's inference; LMDB's block renames it itself).
struct MigrantV2: Entity, Equatable {
    var id: Int64
    var fullName: String
    var amount: Int
    var note: String
    var flag: Int
    static var entityName: String { "Migrant" }
    static let indexes: [Index] = [.on("amount")]
    static let defaultValues: [String: Value] = ["flag": 1]
    static let previousAttributeNames = ["fullName": "name"]

    static let model = Model(version: 2, entities: [MigrantV2.self])

    static func expected(_ id: Int64) -> MigrantV2 {
        let old = MigrantV1.expected(id)
        return MigrantV2(id: id, fullName: old.name, amount: Int(old.amount) ?? -1, note: old.note, flag: 1)
    }

    /// The migration block the v2 app ships.
    static let migration: MigrationBlock = { migration, _ in
        try migration.renameProperty(onType: "Migrant", from: "name", to: "fullName")
        try migration.enumerateObjects(ofType: "Migrant") { old, new in
            try new?.set("amount", to: Int(try old?.string("amount") ?? "") ?? -1)
        }
    }

    /// The SQLite app's migration plan: version 1 as shipped, and a mapping model that parses the amount (the rename,
    /// the added flag and the index change are inferred within the mapping).
    static let plan = MigrationPlan(
        models: [MigrantV1.model],
        mappings: [
            MappingModel(
                from: 1, to: 2,
                [.transform("Migrant", ["amount": .value { source in Int(try source.string("amount") ?? "") ?? -1 }])])
        ])
}

/// What the block of the migration-with-growth scenario (`migrate --grows`) creates: a companion per migrant, every
/// 25th larger than a page, indexed by its owner.
struct Companion: Entity, Equatable {
    var id: Int64
    var name: String
    var ownerID: Int64
    static let indexes: [Index] = [.on("ownerID")]

    static func expected(_ id: Int64) -> Companion {
        Companion(
            id: id,
            name: "companion of migrant \(id), a patient one" + String(repeating: "c", count: id % 25 == 0 ? 6_000 : 0),
            ownerID: id)
    }
}

extension MigrantV2 {
    /// The model of the migration-with-growth scenario: the migrants and their companions.
    static let grownModel = Model(version: 2, entities: [MigrantV2.self, Companion.self])

    /// Its block: the shipped one, creating each migrant's companion while it enumerates them — so that steps commit,
    /// and a small map grows between them, while the enumeration is under way.
    static let growingMigration: MigrationBlock = { migration, _ in
        try migration.renameProperty(onType: "Migrant", from: "name", to: "fullName")
        try migration.enumerateObjects(ofType: "Migrant") { old, new in
            try new?.set("amount", to: Int(try old?.string("amount") ?? "") ?? -1)
            guard let id = try old?.int64("id") else { return }
            try migration.create(Companion.expected(id))
        }
    }
}
