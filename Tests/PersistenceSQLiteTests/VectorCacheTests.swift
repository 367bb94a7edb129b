import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

// The vectors a nearest query copies (SQLiteBuilder.maximumVectorCacheBytes): ranked again only while nothing has
// changed the store — this database's writes, committed or rolled back, raw SQL, another database on the file.

private func points(
    _ directory: URL?, log: CapturedLog? = nil, cacheBytes: Int = 256 << 20, readers: Int = 1
) throws -> SQLiteDatabase {
    var builder = SQLiteBuilder(databaseName: "Points", entities: [Point.self])
    if let directory { builder.directory = directory } else { builder.inMemory = true }
    builder.logger = log?.logger()
    builder.maximumVectorCacheBytes = cacheBytes
    builder.maximumReaders = readers
    return try builder.create()
}

private func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vectorcache-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Point `i` at (i, 1, 0): by euclidean distance from (0, 1, 0), nearest first in key order `p00`, `p01`, …
private func seed(_ db: SQLiteDatabase, count: Int = 40) throws {
    try db.create((0..<count).map { Point(id: name($0), position: Vector([Float($0), 1, 0])) })
}

private func name(_ index: Int) -> String { index < 10 ? "p0\(index)" : "p\(index)" }

private let origin = Query(nearest: .to(Vector([0, 1, 0]), in: "position", by: .euclidean), limit: 3)

private func nearest(_ db: SQLiteDatabase) throws -> [String] {
    try db.nearest(Point.self, origin).map(\.record.id)
}

/// How many times the store's vectors were read: the SELECT of keys and vectors, traced (not a record's by its key).
private func scans(_ log: CapturedLog) -> Int {
    log.entries.filter {
        $0.contains("SELECT \"id\", \"position\" FROM \"Point\"") && !$0.contains("WHERE \"id\" = ?")
    }.count
}

@Test func aReadCopiesTheVectorsAndTheNextReadsRankTheCopy() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let log = CapturedLog()
    let db = try points(directory, log: log)
    try seed(db)
    #expect(try nearest(db) == ["p00", "p01", "p02"])
    #expect(scans(log) == 1)
    let distances = try db.nearest(Point.self, origin).map(\.distance)
    #expect(try nearest(db) == ["p00", "p01", "p02"])
    #expect(scans(log) == 1)
    #expect(distances == [0, 1, 2])
    // A condition reads the store.
    var conditioned = origin
    conditioned.condition = Field("id") > "p05"
    #expect(try db.nearest(Point.self, conditioned).map(\.record.id) == ["p06", "p07", "p08"])
    #expect(scans(log) == 2)
}

@Test func everyCommitReachesTheNextQuery() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let log = CapturedLog()
    let db = try points(directory, log: log)
    let other = try points(directory)
    try seed(db)
    #expect(try nearest(db) == ["p00", "p01", "p02"])

    // This database's typed write.
    try db.update(Point(id: "p30", position: Vector([0.5, 1, 0])))
    #expect(try nearest(db) == ["p00", "p30", "p01"])
    // Another database on the file: another connection, as another process would be.
    try other.update(Point(id: "p31", position: Vector([0.25, 1, 0])))
    #expect(try nearest(db) == ["p00", "p31", "p30"])
    // Raw SQL through the context.
    try db.write { context in
        try context.execute("DELETE FROM \"Point\" WHERE \"id\" = ?", [.text("p00")])
    }
    #expect(try nearest(db) == ["p31", "p30", "p01"])
    // The same read twice in a row ranks the copy.
    let before = scans(log)
    #expect(try nearest(db) == ["p31", "p30", "p01"])
    #expect(scans(log) == before)
}

@Test func aWriteSeesItsOwnChangesAndARollbackLeavesTheCopyRight() throws {
    for directory in [try temporaryDirectory(), nil] {
        defer { directory.map { try? FileManager.default.removeItem(at: $0) } }
        // In memory, reads and writes share one connection, whose data version never moves: its own count of
        // changes keeps the copy honest.
        let db = try points(directory)
        try seed(db)
        #expect(try nearest(db) == ["p00", "p01", "p02"])
        struct Undo: Error {}
        #expect(throws: Undo.self) {
            try db.write { context in
                try context.update(Point(id: "p20", position: Vector([0, 1, 0])))
                #expect(try context.nearest(Point.self, origin).map(\.record.id) == ["p00", "p20", "p01"])
                throw Undo()
            }
        }
        #expect(try nearest(db) == ["p00", "p01", "p02"])
        try db.write { context in
            _ = try context.delete(Point.self, id: "p01")
            #expect(try context.nearest(Point.self, origin).map(\.record.id) == ["p00", "p02", "p03"])
        }
        #expect(try nearest(db) == ["p00", "p02", "p03"])
    }
}

@Test func aSmallLimitCopiesNothingAndAnOddValueIsNeverCopied() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let log = CapturedLog()
    // 40 vectors of 12 bytes and their keys don't fit in 256 bytes: every query reads the store.
    let small = try points(directory, log: log, cacheBytes: 256)
    try seed(small)
    #expect(try nearest(small) == ["p00", "p01", "p02"])
    #expect(try nearest(small) == ["p00", "p01", "p02"])
    #expect(scans(log) == 2)
    try small.close()

    let db = try points(directory, log: log)
    try db.write { context in
        try context.execute(
            "UPDATE \"Point\" SET \"position\" = ? WHERE \"id\" = ?", [.blob(Data([1, 2, 3, 4, 5])), .text("p39")])
    }
    for _ in 0..<2 {
        #expect {
            try nearest(db)
        } throws: {
            ($0 as? PersistenceError)?.code == .typeMismatch
        }
    }
    _ = try db.delete(Point.self, id: "p39")
    #expect(try nearest(db) == ["p00", "p01", "p02"])
}

@Test func severalReadersShareOneCopy() async throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let db = try points(directory, readers: 4)
    try seed(db, count: 200)
    try await withThrowingTaskGroup(of: [String].self) { group in
        for _ in 0..<8 { group.addTask { try await db.read { try $0.nearest(Point.self, origin).map(\.record.id) } } }
        for try await ranked in group { #expect(ranked == ["p00", "p01", "p02"]) }
    }
    try db.update(Point(id: "p150", position: Vector([0, 1, 0])))
    try await withThrowingTaskGroup(of: [String].self) { group in
        for _ in 0..<8 { group.addTask { try await db.read { try $0.nearest(Point.self, origin).map(\.record.id) } } }
        for try await ranked in group { #expect(ranked == ["p00", "p150", "p01"]) }
    }
}

@Test func aNegativeLimitIsRefused() throws {
    var builder = SQLiteBuilder(databaseName: "Points", entities: [Point.self])
    builder.inMemory = true
    builder.maximumVectorCacheBytes = -1
    #expect {
        try builder.create()
    } throws: {
        ($0 as? PersistenceError)?.code == .invalidConfiguration
    }
}
