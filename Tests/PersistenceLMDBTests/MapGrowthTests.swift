import Foundation
import PersistenceLMDB
import PersistenceTesting
import Synchronization
import Testing

/// A write block runs exactly once: the map grows ahead of need, and a write that fills it anyway is rolled back
/// whole with `storageFull` instead of being run again.
struct MapGrowthTests {
    struct Small: Entity {
        var id: Int64
        var value: Int32
    }

    static func smalls(_ count: Int) -> SinglePassSequence<Small> {
        SinglePassSequence(count: count) { Small(id: Int64($0), value: Int32(truncatingIfNeeded: $0 &* 7)) }
    }

    func smallStore(_ directory: URL, mapSize: Int = 1 << 20) throws -> LMDBDatabase {
        var builder = LMDBBuilder.unencrypted(databaseName: "Growth", model: Model(entities: [Small.self]))
        builder.directory = directory
        builder.initialMapSize = mapSize
        return try builder.create()
    }

    @Test func theDefaultMapIsLargeAddressSpaceNotDisk() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Default", model: Model(entities: [Small.self]))
            builder.directory = directory
            let db = try builder.create()
            #expect(LMDBBuilder.defaultMapSize >= 1 << 30)
            #expect(db.mapSize == LMDBBuilder.defaultMapSize)
            try db.create(Small(id: 1, value: 1))
            let size = try FileManager.default.attributesOfItem(atPath: db.fileURL.path)[.size] as? Int
            #expect((size ?? .max) < 1 << 20, "the file holds the data, not the map")
        }
    }

    @Test func aSinglePassSequenceIsStoredWholeFromTheDefaultMap() throws {
        try withTemporaryDirectory { directory in
            var builder = LMDBBuilder.unencrypted(databaseName: "Default", model: Model(entities: [Small.self]))
            builder.directory = directory
            let db = try builder.create()
            let sequence = Self.smalls(60_000)
            try db.create(sequence)
            #expect(sequence.iterations == 1)
            #expect(try db.count(Small.self) == 60_000)
        }
    }

    @Test func aWriteThatFillsTheMapRunsOnceAndStoresNothing() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            try db.create(Small(id: 0, value: 0))
            let sequence = Self.smalls(60_000)
            let runs = Atomic(0)
            expectError(.storageFull) {
                try db.write { context in
                    runs.add(1, ordering: .relaxed)
                    try context.create(sequence)
                }
            }
            #expect(runs.load(ordering: .relaxed) == 1, "the block ran once")
            #expect(sequence.iterations == 1, "the sequence was never started again")
            #expect(try db.count(Small.self) == 1, "nothing of the failed write was stored")
            #expect(db.mapSize > 1 << 20, "the map grew for the next attempt")
        }
    }

    @Test func aFailedWriteCanBeRunAgainUntilItFits() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            var attempts = 0
            var stored = false
            while !stored && attempts < 12 {
                attempts += 1
                do {
                    try db.create(Self.smalls(60_000))
                    stored = true
                } catch let error as PersistenceError where error.code == .storageFull {
                    #expect(try db.count(Small.self) == 0, "attempt \(attempts) left nothing behind")
                }
            }
            #expect(stored, "the map grew after each failure until the write fit")
            #expect(attempts == 2, "the map grew to fit the whole write: one retry")
            #expect(try db.count(Small.self) == 60_000)
        }
    }

    /// The case: a 200,000-record write from a 1 MiB map fits at its second attempt — the map grows to fit
    /// what the whole failed write asked to store, not by doubling once per failure.
    @Test(arguments: [false, true])
    func aLargeWriteFromASmallMapFitsAtItsSecondAttempt(encrypted: Bool) throws {
        try withTemporaryDirectory { directory in
            var builder =
                encrypted
                ? LMDBBuilder(databaseName: "Growth", passphrase: "grow", model: Model(entities: [Small.self]))
                : LMDBBuilder.unencrypted(databaseName: "Growth", model: Model(entities: [Small.self]))
            builder.directory = directory
            builder.initialMapSize = 1 << 20
            builder.keyDerivation = testKeyDerivation
            let db = try builder.create()
            let runs = Atomic(0)
            let write = {
                try db.write { context in
                    runs.add(1, ordering: .relaxed)
                    try context.create(Self.smalls(200_000))
                }
            }
            expectError(.storageFull) { try write() }
            #expect(try db.count(Small.self) == 0)
            try write()
            #expect(runs.load(ordering: .relaxed) == 2, "one failed attempt, one that fit")
            #expect(try db.count(Small.self) == 200_000)
        }
    }

    @Test func aBlockThatSwallowsTheMapFullErrorIsStillRolledBack() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            let note = Mutex<PersistenceError.Code?>(nil)
            expectError(.storageFull) {
                try db.write { context in
                    do {
                        // Writes past the full map are measured, not stored; a read can't be answered.
                        for id in 1...200_000 { try context.create(Small(id: Int64(id), value: 0)) }
                        _ = try context.recover(Small.self, id: 1)
                    } catch let error as PersistenceError {
                        note.withLock { $0 = error.code }
                    }
                }
            }
            #expect(note.withLock { $0 } == .storageFull, "the block saw a typed error, not an internal one")
            #expect(try db.count(Small.self) == 0)
        }
    }

    @Test func aSavepointThatFillsTheMapFailsItsWholeWrite() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            try db.create(Small(id: 0, value: 0))
            let note = Mutex<PersistenceError.Code?>(nil)
            expectError(.storageFull) {
                try db.write { context in
                    try context.create(Small(id: -1, value: 1))
                    do {
                        // A nested transaction that fills the map can't be rolled back alone: the write can't commit.
                        try context.savepoint {
                            for id in 1...200_000 { try context.create(Small(id: Int64(id), value: 0)) }
                        }
                    } catch let error as PersistenceError {
                        note.withLock { $0 = error.code }
                    }
                }
            }
            #expect(note.withLock { $0 } == .storageFull)
            #expect(try db.count(Small.self) == 1)
            // The map has grown: the same write fits now, savepoint and all.
            try db.write { context in
                try context.create(Small(id: -1, value: 1))
                try context.savepoint {
                    for id in 1...20_000 { try context.create(Small(id: Int64(id), value: 0)) }
                }
            }
            #expect(try db.count(Small.self) == 20_002)
        }
    }

    @Test func growsTheMapAheadOfNeedBetweenWrites() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            let total = 200_000
            let batch = 10_000
            for start in stride(from: 0, to: total, by: batch) {
                try db.write { context in
                    for id in start..<(start + batch) {
                        try context.create(Small(id: Int64(id), value: Int32(truncatingIfNeeded: id &* 7)))
                    }
                }
            }
            #expect(db.mapSize > 1 << 20, "the map grew")
            #expect(try db.count(Small.self) == total)
            for id in [0, 1, 99_999, 199_999] {
                #expect(try db.recover(Small.self, id: Int64(id))?.value == Int32(truncatingIfNeeded: id &* 7))
            }
        }
    }

    @Test func growsTheMapAheadOfNeedForEncryptedValues() throws {
        try withTemporaryDirectory { directory in
            var builder = secrets(directory)
            builder.initialMapSize = 1 << 20
            let db = try builder.create()
            let note = String(repeating: "n", count: 1_000)
            for start in stride(from: 0, to: 5_000, by: 250) {
                try db.write { context in
                    for id in start..<(start + 250) {
                        try context.create(Secret(id: Int64(id), note: "\(id)\(note)", tag: "t"))
                    }
                }
            }
            #expect(db.mapSize > 1 << 20)
            #expect(try db.count(Secret.self) == 5_000)
            #expect(try db.recover(Secret.self, id: 4_999)?.note == "4999\(note)")
        }
    }

    @Test func aWriteUnderAReadOfTheSameThreadFailsInsteadOfHanging() throws {
        try withTemporaryDirectory { directory in
            let db = try smallStore(directory)
            try db.read { _ in
                try db.write { try $0.create(Small(id: 1, value: 1)) }
                expectError(.storageFull) {
                    try db.write { context in
                        for id in 2..<200_000 { try context.create(Small(id: Int64(id), value: 0)) }
                    }
                }
            }
            #expect(try db.count(Small.self) == 1, "the small write committed; the refused one left nothing")
            var stored = false
            for _ in 0..<12 where !stored {
                do {
                    try db.write { context in
                        for id in 2..<200_000 { try context.create(Small(id: Int64(id), value: 0)) }
                    }
                    stored = true
                } catch let error as PersistenceError where error.code == .storageFull {}
            }
            #expect(stored, "outside the read, the map grows")
            #expect(try db.count(Small.self) == 199_999)
        }
    }
}
