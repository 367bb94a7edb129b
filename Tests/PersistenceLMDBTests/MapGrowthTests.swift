import Foundation
import PersistenceLMDB
import PersistenceTesting
import Testing

struct MapGrowthTests {
    struct Small: Entity {
        var id: Int64
        var value: Int32
    }

    @Test func growsTheMapForAMillionRecords() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Growth", model: Model(entities: [Small.self]))
            builder.directory = directory
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            let total = 1_000_000
            let batch = 100_000
            for start in stride(from: 0, to: total, by: batch) {
                try db.write { context in
                    for id in start..<(start + batch) {
                        try context.create(Small(id: Int64(id), value: Int32(truncatingIfNeeded: id &* 7)))
                    }
                }
            }
            #expect(db.mapSize > 1 << 20, "the map grew")
            #expect(try db.count(Small.self) == total)
            for id in [0, 1, 499_999, 999_999] {
                #expect(try db.recover(Small.self, id: Int64(id))?.value == Int32(truncatingIfNeeded: id &* 7))
            }
        }
    }

    @Test func growsTheMapForEncryptedValues() throws {
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            let note = String(repeating: "n", count: 1_000)
            try db.write { context in
                for id in 0..<5_000 { try context.create(Secret(id: Int64(id), note: "\(id)\(note)", tag: "t")) }
            }
            #expect(db.mapSize > 1 << 20)
            #expect(try db.count(Secret.self) == 5_000)
            #expect(try db.recover(Secret.self, id: 4_999)?.note == "4999\(note)")
        }
    }

    @Test func refusesToGrowUnderAReadOfTheSameThreadInsteadOfHanging() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Nested", model: Model(entities: [Small.self]))
            builder.directory = directory
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            try db.read { _ in
                try db.write { try $0.create(Small(id: 1, value: 1)) }
                expectError(.storageFull) {
                    try db.write { context in
                        for id in 2..<200_000 { try context.create(Small(id: Int64(id), value: 0)) }
                    }
                }
            }
            #expect(try db.count(Small.self) == 1, "the small write committed; the refused one left nothing")
            try db.write { context in
                for id in 2..<200_000 { try context.create(Small(id: Int64(id), value: 0)) }
            }
            #expect(try db.count(Small.self) == 199_999, "outside the read, the map grows")
        }
    }
}
