import Foundation
import MetricsTestKit
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceLMDB

/// A migration from a small map: the map grows between the migration's steps, never while one of its cursors is
/// open (growing remaps the file, and a cursor still reading the old mapping crashes the process), and the block
/// runs exactly once per record.
struct MigrationMapGrowthTests {
    struct RecV1: Entity, Equatable {
        var id: Int64
        var label: String
        var rank: String
        static var entityName: String { "Rec" }
    }

    struct RecV2: Entity, Equatable {
        var id: Int64
        var label: String
        var rank: Int
        static var entityName: String { "Rec" }
    }

    struct Pet: Entity, Equatable {
        var id: Int64
        var name: String
        var kind: String
        var ownerID: Int64
        static let indexes: [Index] = [.on("ownerID")]
    }

    static func record(_ id: Int64) -> RecV1 { RecV1(id: id, label: "label \(id)", rank: String(id % 97)) }

    /// A pet's name: about 40 characters, or `length` when given.
    static func petName(_ id: Int64, length: Int = 0) -> String {
        let name = "pet of record \(id), a patient animal"
        return name + String(repeating: "p", count: max(0, length - name.count))
    }

    func builder(_ directory: URL, _ version: Int, encrypted: Bool) -> LMDBBuilder {
        let model =
            version == 1
            ? Model(version: 1, entities: [RecV1.self]) : Model(version: 2, entities: [RecV2.self, Pet.self])
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: "Small", passphrase: "small map", model: model)
            : LMDBBuilder.unencrypted(databaseName: "Small", model: model)
        builder.directory = directory
        builder.keyDerivation = testKeyDerivation
        return builder
    }

    /// A version-1 store of `count` records, written with the default map; opening it with a 1 MiB map leaves LMDB a
    /// map of the size the store uses, no more.
    func seed(_ directory: URL, encrypted: Bool, count: Int) throws {
        let db = try builder(directory, 1, encrypted: encrypted).create()
        try db.create((1...Int64(count)).map(Self.record))
        try db.close()
    }

    /// The version-2 builder with a 1 MiB map and `block`, counting the map's growths in `metrics`.
    func migrating(
        _ directory: URL, encrypted: Bool, metrics: TestMetrics, block: @escaping MigrationBlock
    ) -> LMDBBuilder {
        var builder = builder(directory, 2, encrypted: encrypted)
        builder.initialMapSize = 1 << 20
        builder.metricsFactory = metrics
        builder.migrationBlock = block
        return builder
    }

    func growths(_ metrics: TestMetrics) throws -> Int {
        Int(try metrics.expectCounter("persistence_map_growths", [("backend", "lmdb"), ("store", "Small")]).totalValue)
    }

    /// Every record converted and every pet there, once, with its index; the store sound.
    func expectMigrated(_ db: LMDBDatabase, count: Int, nameLength: (Int64) -> Int = { _ in 0 }) throws {
        #expect(try db.count(RecV2.self) == count)
        #expect(try db.count(Pet.self) == count)
        for id in [1, Int64(count / 2), Int64(count)] {
            #expect(try db.recover(RecV2.self, id: id) == RecV2(id: id, label: "label \(id)", rank: Int(id % 97)))
            #expect(
                try db.recover(Pet.self, id: id)
                    == Pet(id: id, name: Self.petName(id, length: nameLength(id)), kind: "cat", ownerID: id))
            #expect(try db.count(Pet.self, where: Field("ownerID") == id) == 1)
        }
        let report = try db.verify()
        #expect(report.isSound, "\(report)")
    }

    /// The case: 20,000 records, a block that converts an attribute and creates a pet per record while it
    /// enumerates them, from a 1 MiB map. It crashed the process (SIGBUS in `mdb_cursor_get`): a step committed and
    /// grew the map while the enumeration's cursor was open.
    @Test(arguments: [true, false])
    func aBlockCreatingAnObjectPerRecordOutgrowsASmallMap(encrypted: Bool) throws {
        let count = 20_000
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted, count: count)
            let visits = Atomic(0)
            let metrics = TestMetrics()
            let db = try migrating(directory, encrypted: encrypted, metrics: metrics) { migration, _ in
                try migration.enumerateObjects(ofType: "Rec") { old, new in
                    guard let old, let new else { return }
                    visits.add(1, ordering: .relaxed)
                    let id = try old.int64("id") ?? 0
                    try new.set("rank", to: Int(try old.string("rank") ?? "") ?? -1)
                    try migration.create(
                        "Pet", value: ["id": id, "name": Self.petName(id), "kind": "cat", "ownerID": id])
                }
            }.create()
            #expect(visits.load(ordering: .relaxed) == count, "the block saw each record once")
            let grown = try growths(metrics)
            #expect(grown >= 2, "the map grew during the migration")
            print(
                "LMDB migration from a 1 MiB map (\(count) records + a pet each): the map grew \(grown) times, to \(db.mapSize) bytes"
            )
            try expectMigrated(db, count: count)
        }
    }

    /// The name lengths of ``recordsLargerThanAPageGrowTheMapManyTimes(encrypted:)``: over a page, one over 1 MiB.
    static func largeNameLength(_ id: Int64) -> Int { id == 700 ? 3 << 20 : 5_000 }

    /// Created records larger than a page (overflow pages), one of them larger than the whole map: the map grows
    /// many times, each time between steps, and the one record too large for what is free grows it before it is
    /// written — no `storageFull`, no second run of the block.
    @Test(arguments: [true, false])
    func recordsLargerThanAPageGrowTheMapManyTimes(encrypted: Bool) throws {
        let count = 1_500
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: encrypted, count: count)
            let runs = Atomic(0)
            let metrics = TestMetrics()
            let db = try migrating(directory, encrypted: encrypted, metrics: metrics) { migration, _ in
                runs.add(1, ordering: .relaxed)
                try migration.enumerateObjects(ofType: "Rec") { old, new in
                    guard let old, let new else { return }
                    let id = try old.int64("id") ?? 0
                    try new.set("rank", to: Int(try old.string("rank") ?? "") ?? -1)
                    try migration.create(
                        "Pet",
                        value: [
                            "id": id, "name": Self.petName(id, length: Self.largeNameLength(id)), "kind": "cat",
                            "ownerID": id,
                        ])
                }
            }.create()
            #expect(runs.load(ordering: .relaxed) == 1)
            let grown = try growths(metrics)
            #expect(grown >= 4, "the map grew several times")
            print(
                "LMDB migration from a 1 MiB map (\(count) pets over a page, one of 3 MiB): the map grew \(grown) times, to \(db.mapSize) bytes"
            )
            #expect(db.mapSize > 16 << 20)
            try expectMigrated(db, count: count, nameLength: Self.largeNameLength)
            #expect(try db.recover(Pet.self, id: 700)?.name.count == 3 << 20)
        }
    }

    /// Enumerations nested in an enumeration of another entity: the inner one writes enough for steps of its own
    /// while the outer one is under way, and the outer one goes on after them where it was — from a small map, and
    /// from the default one, where the outer enumeration, its cursor ended by a step of the inner one, stopped early
    /// and the migration silently lost the records it had not reached.
    @Test(arguments: [true, false])
    func anEnumerationInsideAnotherGoesOnAcrossSteps(smallMap: Bool) throws {
        let count = 2_000
        try withTemporaryDirectory { directory in
            try seed(directory, encrypted: true, count: count)
            let visits = Atomic(0)
            let metrics = TestMetrics()
            var builder = migrating(directory, encrypted: true, metrics: metrics) { migration, _ in
                for id in 1...Int64(count) {
                    try migration.create(
                        "Pet", value: ["id": id, "name": Self.petName(id, length: 3_000), "kind": "dog", "ownerID": id])
                }
                try migration.enumerateObjects(ofType: "Rec") { old, new in
                    guard let old, let new else { return }
                    visits.add(1, ordering: .relaxed)
                    let id = try old.int64("id") ?? 0
                    try new.set("rank", to: Int(try old.string("rank") ?? "") ?? -1)
                    guard id % 400 == 0 else { return }
                    // Rewrites every pet: thousands of pages, several steps, inside the enumeration of records.
                    try migration.enumerateObjects(ofType: "Pet") { _, pet in
                        guard let pet else { return }
                        let owner = try pet.int64("ownerID") ?? 0
                        try pet.set("kind", to: id == Int64(count) ? "cat" : "dog \(id)")
                        try pet.set("name", to: Self.petName(owner))
                    }
                }
            }
            if !smallMap { builder.initialMapSize = LMDBBuilder.defaultMapSize }
            let db = try builder.create()
            #expect(visits.load(ordering: .relaxed) == count)
            if smallMap { #expect(try growths(metrics) >= 2) }
            try expectMigrated(db, count: count)
        }
    }
}
