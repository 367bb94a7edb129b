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
