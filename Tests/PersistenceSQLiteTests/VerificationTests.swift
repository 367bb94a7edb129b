import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// A record whose columns raw SQL can fill with values the entity can't read.
struct Reading: Entity, Equatable {
    var id: Int64
    var level: Int
    var done: Bool
    var device: UUID?
    var label: String
    static let indexes: [Index] = [.on("label")]
}

/// `verify()` on SQLite: values raw SQL stored that the entity can't read, schema drift, damaged pages.
struct VerificationTests {
    static func seeded(_ directory: URL, count: Int = 10) throws -> SQLiteDatabase {
        let db = try builder(directory, [Note.self, Reading.self]).create()
        try db.create((1...count).map { Note(id: Int64($0), title: "title \($0)", body: $0 % 2 == 0 ? nil : "body") })
        try db.create((1...count).map { Reading(id: Int64($0), level: $0, done: false, device: nil, label: "l\($0)") })
        return db
    }

    @Test func intactStoreIsSound() throws {
        try withTemporaryDirectory { directory in
            let report = try Self.seeded(directory).verify()
            #expect(report.isSound, "\(report)")
            #expect(report.entitiesChecked == 2)
            #expect(report.recordsChecked == 20)
        }
    }

    @Test func reportsValuesOfTheWrongType() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory)
            try db.write { context in
                // Column affinity converts what it can; these it can't, so SQLite stores them as given.
                try context.execute("UPDATE \"Reading\" SET \"level\" = 'high' WHERE \"id\" = 2")
                try context.execute("UPDATE \"Reading\" SET \"done\" = 2 WHERE \"id\" = 3")
                try context.execute("UPDATE \"Reading\" SET \"device\" = x'0102' WHERE \"id\" = 4")
                try context.execute("UPDATE \"Note\" SET \"title\" = x'00' WHERE \"id\" = 5")
            }
            let report = try db.verify()
            let found = report.problems.map {
                "\($0.kind) \($0.entity ?? "") \($0.primaryKey ?? "") \($0.attribute ?? "")"
            }
            #expect(
                found == [
                    "typeMismatch Note 5 title", "typeMismatch Reading 2 level", "typeMismatch Reading 3 done",
                    "typeMismatch Reading 4 device",
                ], "\(report)")
            #expect(!report.description.contains("high"), "reports never show values")
            // What verify reports is what a read would trip on.
            expectError(.typeMismatch) { try db.recover(Reading.self, id: 2) }
        }
    }

    @Test func reportsANullInANonOptionalColumn() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory)
            // NOT NULL refuses the NULL: rebuild the table without it first, as a hand-made schema change might.
            try db.write { context in
                for sql in [
                    "ALTER TABLE \"Note\" RENAME TO \"Note_old\"",
                    "CREATE TABLE \"Note\" (\"id\" INTEGER NOT NULL PRIMARY KEY, \"title\" TEXT, \"body\" TEXT)",
                    "INSERT INTO \"Note\" SELECT \"id\", \"title\", \"body\" FROM \"Note_old\"",
                    "DROP TABLE \"Note_old\"",
                    "CREATE INDEX \"index_Note_title\" ON \"Note\" (\"title\")",
                    "UPDATE \"Note\" SET \"title\" = NULL WHERE \"id\" = 6",
                ] {
                    try context.execute(sql)
                }
            }
            let report = try db.verify()
            let found = report.problems.map { "\($0.kind) \($0.primaryKey ?? "-") \($0.attribute ?? "")" }
            #expect(found == ["schemaMismatch - title", "missingValue 6 title"], "\(report)")
        }
    }

    @Test func reportsADroppedIndex() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory)
            try db.write { context in _ = try context.execute("DROP INDEX \"index_Reading_label\"") }
            let report = try db.verify()
            #expect(report.problems.map(\.kind) == [.schemaMismatch], "\(report)")
            #expect(report.problems.first?.index == "index_Reading_label")
            #expect(report.problems.first?.entity == "Reading")
        }
    }

    @Test func reportsDamagedMetadata() throws {
        try withTemporaryDirectory { directory in
            let db = try Self.seeded(directory)
            try db.write { context in
                _ = try context.execute("DELETE FROM \"persistence_metadata\" WHERE \"key\" = 'modelVersion'")
                _ = try context.execute(
                    "UPDATE \"persistence_metadata\" SET \"value\" = x'00' WHERE \"key\" = 'schema'")
            }
            #expect(try db.verify().problems.map(\.kind) == [.metadataMissing, .metadataInvalid])
        }
    }

    /// Damaged pages in the middle of the file: a typed error or problems, never a crash or a sound report.
    @Test(arguments: [0.3, 0.5, 0.8])
    func reportsDamagedPages(at fraction: Double) throws {
        try withTemporaryDirectory { directory in
            do { _ = try Self.seeded(directory, count: 3_000) }
            let file = directory.appendingPathComponent("Notes.sqlite")
            var bytes = try Data(contentsOf: file)
            #expect(bytes.count > 64 * 1024, "the store spans many pages")
            let pageSize = 4096
            let start = Int(Double(bytes.count / pageSize) * fraction) * pageSize
            // Three whole pages, every other one, filled with a pattern no page starts with.
            for page in 0..<3 {
                for offset in 0..<pageSize {
                    bytes[start + page * 2 * pageSize + offset] = UInt8(truncatingIfNeeded: offset &* 31 &+ 7)
                }
            }
            try bytes.write(to: file)
            do {
                let report = try builder(directory, [Note.self, Reading.self]).create().verify()
                #expect(!report.isSound)
                #expect(report.problems.contains { $0.kind == .engineIntegrity }, "\(report)")
            } catch let error as PersistenceError {
                #expect(error.code == .corrupt, "\(error)")
            }
        }
    }
}
