import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// What migrations do to SQLite's files and tables beyond the migration suite (`MigrationConformanceTests`): the
/// backup before a heavyweight step, tables kept when only indexes change, constraints and storage classes.
struct SQLiteMigrationTests {
    struct Item: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        static let indexes: [Index] = [.on("name")]
    }
    static let v1 = Model(version: 1, entities: [Item.self])
    static let items = [
        Item(id: 1, name: "one", note: "n1", count: 10), Item(id: 2, name: "two", note: nil, count: 20),
    ]

    struct Indexed: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int32
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.unique("name"), .on("count")]
    }

    struct Required: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String
        var count: Double
        static var entityName: String { "Item" }
        static let indexes: [Index] = [.on("name")]
        static let defaultValues: [String: Value] = ["note": "none"]
    }

    /// Version 2 with a mapped step: each count doubled.
    struct Doubled: Entity, Equatable {
        var id: Int64
        var name: String
        var note: String?
        var count: Int
        static var entityName: String { "Item" }
    }

    /// Names become numbers: no inference for that.
    struct Renumbered: Entity {
        var id: Int64
        var name: Int
        static var entityName: String { "Item" }
    }

    private func builder(_ directory: URL, _ model: Model, _ mappings: [EntityMapping]? = nil) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: "Items", model: model)
        builder.directory = directory
        if let mappings {
            builder.migrationPlan = MigrationPlan(models: [Self.v1], mappings: [MappingModel(from: 1, to: 2, mappings)])
        }
        return builder
    }

    private func seed(_ directory: URL) throws {
        try builder(directory, Self.v1).create().create(Self.items)
    }

    private func storeBytes(_ directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("Items.sqlite"))
    }

    static let doubling: [EntityMapping] = [
        .transform("Item", ["count": .value { source in (try source.int64("count") ?? 0) * 2 }])
    ]
    static let doubledModel = Model(version: 2, entities: [Doubled.self])

    @Test func anIndexChangeKeepsTheTable() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let db = try builder(directory, Model(version: 2, entities: [Indexed.self])).create()
            #expect(db.migrationReport?.steps.first?.entities.first?.recordsRewritten == 0, "the table is kept")
            let indexes = try db.read {
                try $0.rows("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
            }
            #expect(indexes.compactMap { $0["name"] } == [.text("index_Item_count"), .text("unique_Item_name")])
        }
    }

    @Test func requiredColumnsAreNotNullAndWidenedColumnsStoreReals() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let db = try builder(directory, Model(version: 2, entities: [Required.self])).create()
            #expect(try db.recover(Required.self).map(\.note) == ["n1", "none"])
            expectError(.constraintViolation) {
                try db.write { try $0.execute("UPDATE \"Item\" SET \"note\" = NULL WHERE \"id\" = 1") }
            }
            let stored = try db.read { try $0.scalar("SELECT typeof(\"count\") FROM \"Item\" WHERE \"id\" = 1") }
            #expect(stored == .text("real"))
            let columns = try db.read { try $0.rows("SELECT name FROM pragma_table_info('Item') ORDER BY cid") }
            #expect(columns.compactMap { $0["name"] } == ["id", "name", "note", "count"].map { .text($0) })
        }
    }

    @Test func aHeavyweightMigrationBacksTheStoreUpFirst() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let db = try builder(directory, Self.doubledModel, Self.doubling).create()
            #expect(try db.recover(Doubled.self).map(\.count) == [20, 40])
            let backup = try builder(directory, Self.doubledModel, []).migrationBackupFile(fromVersion: 1)
            #expect(backup.lastPathComponent == "Items.v1.sqlite-backup")
            // The backup is a complete store of version 1.
            let copy = directory.appendingPathComponent("Copy")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
            try FileManager.default.copyItem(at: backup, to: copy.appendingPathComponent("Items.sqlite"))
            #expect(try builder(copy, Self.v1).create().recover(Item.self) == Self.items)
            #expect(
                try contents(of: directory) == [
                    "Copy", "Items.sqlite", "Items.sqlite-shm", "Items.sqlite-wal", "Items.v1.sqlite-backup",
                ])
        }
        try withTemporaryDirectory { directory in
            try seed(directory)
            var noBackup = builder(directory, Self.doubledModel, Self.doubling)
            noBackup.backsUpBeforeHeavyweightMigration = false
            _ = try noBackup.create()
            #expect(!FileManager.default.fileExists(atPath: try noBackup.migrationBackupFile(fromVersion: 1).path))
        }
    }

    @Test func aFailedOrRefusedMigrationLeavesNoBackupAndTheFileAsItWas() throws {
        struct Stop: Error {}
        try withTemporaryDirectory { directory in
            try seed(directory)
            let before = try storeBytes(directory)
            let failing = builder(
                directory, Self.doubledModel, [.transform("Item", ["count": .value { _ -> Int in throw Stop() }])])
            let error = expectError(.migrationFailed) { try failing.create() }
            #expect(error?.underlyingError is Stop)
            let refused = builder(directory, Model(version: 2, entities: [Renumbered.self]), [])
            expectError(.migrationRequired) { try refused.create() }
            #expect(try storeBytes(directory) == before)
            #expect(try contents(of: directory) == ["Items.sqlite"], "no backup, WAL or journal left")
        }
    }

    @Test func aDryRunLeavesOnlyTheStoreFile() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let before = try storeBytes(directory)
            let report = try builder(directory, Self.doubledModel, Self.doubling).dryRunMigration()
            #expect(report?.steps.first?.kind == .mapped)
            #expect(try storeBytes(directory) == before)
            #expect(try contents(of: directory) == ["Items.sqlite"])
        }
    }

    /// What a process killed while copying the store before a heavyweight migration leaves: the temporary copy and
    /// its journal — a copy of the user's data.
    static func abandonCopy(in directory: URL, store: String = "Items") throws -> [String] {
        let copy = ".\(store).v1.sqlite-backup.\(UUID().uuidString).partial"
        try Data("user data".utf8).write(to: directory.appendingPathComponent(copy))
        try Data("journal".utf8).write(to: directory.appendingPathComponent(copy + "-journal"))
        return [copy, copy + "-journal"]
    }

    @Test func anOpenRemovesACopyAKilledBackupLeftAndKeepsOneUnderWay() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            let abandoned = try Self.abandonCopy(in: directory)
            let underWay = try Self.abandonCopy(in: directory)
            let otherStores = try Self.abandonCopy(in: directory, store: "Other")
            // A backup under way in another process holds its copy's lock.
            let lock = open(directory.appendingPathComponent(underWay[0]).path, O_RDWR)
            #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
            defer { close(lock) }
            _ = try builder(directory, Self.v1).create()
            let files = try contents(of: directory)
            #expect(abandoned.allSatisfy { !files.contains($0) }, "\(files)")
            #expect(underWay.allSatisfy { files.contains($0) }, "\(files)")
            #expect(otherStores.allSatisfy { files.contains($0) }, "another store's copy: \(files)")
        }
    }

    @Test func deletingTheStoreRemovesCopiesAKilledBackupLeft() throws {
        try withTemporaryDirectory { directory in
            try seed(directory)
            _ = try Self.abandonCopy(in: directory)
            let otherStores = try Self.abandonCopy(in: directory, store: "Other")
            #expect(try builder(directory, Self.v1).deleteStore())
            #expect(try contents(of: directory) == otherStores.sorted())
        }
    }
}
