import Foundation
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// SQLite hands a query's rows to record code in place (the statement's columns, no array of values in between):
/// these check that every kind of record code — hand-written, and `Codable`'s keyed containers — reads what the
/// values would have given, and refuses what they would have refused, naming the attribute and never the value.
struct RowReadingTests {
    /// The probe's attributes, read through `Codable`.
    struct CodableProbe: Entity, Equatable {
        var id: Int64
        var count: Int
        var total: Int64
        var ratio: Double
        var flag: Bool
        var title: String
        var note: String?
        var level: Int?
        var small: Int32
        static let entityName = "Probe"
    }

    /// The same attributes, read by the entity's own code.
    struct HandWrittenProbe: Entity, Equatable {
        var id: Int64
        var count: Int
        var total: Int64
        var ratio: Double
        var flag: Bool
        var title: String
        var note: String?
        var level: Int?
        var small: Int32
        static let entityName = "Probe"

        init(record: AttributeReader) throws {
            id = try record.read("id")
            count = try record.read("count")
            total = try record.read("total")
            ratio = try record.read("ratio")
            flag = try record.read("flag")
            title = try record.read("title")
            note = try record.read("note")
            level = try record.read("level")
            small = try record.read("small")
        }
    }

    /// Reads the optional `note` as required: a stored `nil` is a mismatch.
    struct RequiredNoteProbe: Entity {
        var id: Int64
        var count: Int
        var total: Int64
        var ratio: Double
        var flag: Bool
        var title: String
        var note: String?
        var level: Int?
        var small: Int32
        static let entityName = "Probe"

        init(record: AttributeReader) throws {
            id = try record.read("id")
            count = try record.read("count")
            total = try record.read("total")
            ratio = try record.read("ratio")
            flag = try record.read("flag")
            title = try record.read("title")
            note = try record.read("note", as: String.self)
            level = try record.read("level")
            small = try record.read("small")
        }
    }

    private func open(_ directory: URL, _ type: any Entity.Type) throws -> SQLiteDatabase {
        try builder(directory, [type], name: "Probes").create()
    }

    private let stored = [
        CodableProbe(
            id: 1, count: -7, total: .max, ratio: 2.5, flag: true, title: "héllo\u{0}", note: nil, level: nil,
            small: .min),
        CodableProbe(id: 2, count: 0, total: .min, ratio: -1.25, flag: false, title: "", note: "n", level: 3, small: 9),
    ]

    @Test func everyKindOfRecordCodeReadsTheSameValues() throws {
        try withTemporaryDirectory { directory in
            try open(directory, CodableProbe.self).create(stored)
            let codable = try open(directory, CodableProbe.self)
            #expect(try codable.recover(CodableProbe.self) == stored)
            #expect(try codable.recover(CodableProbe.self, id: 1) == stored[0])
            try codable.close()
            let handWritten = try open(directory, HandWrittenProbe.self)
            let read = try handWritten.recover(HandWrittenProbe.self)
            #expect(read.map(\.title) == stored.map(\.title))
            #expect(read.map(\.total) == stored.map(\.total))
            #expect(read.map(\.ratio) == stored.map(\.ratio))
            #expect(read.map(\.note) == [nil, "n"])
            #expect(read.map(\.level) == [nil, 3])
            #expect(read.map(\.small) == [.min, 9])
            #expect(try handWritten.recover(HandWrittenProbe.self, id: 2)?.flag == false)
            // A user's body may query the same entity again between rows: each row is still its own.
            var nested: [Int64] = []
            try handWritten.read { context in
                try context.forEach(HandWrittenProbe.self, query: Query()) { probe in
                    nested.append(probe.id)
                    nested += try context.recover(HandWrittenProbe.self, query: Query()).map(\.id)
                }
            }
            #expect(nested == [1, 1, 2, 2, 1, 2])
        }
    }

    @Test func aStoredNilReadAsRequiredIsAMismatch() throws {
        try withTemporaryDirectory { directory in
            try open(directory, CodableProbe.self).create(stored)
            let db = try open(directory, RequiredNoteProbe.self)
            #expect(try db.recover(RequiredNoteProbe.self, id: 2)?.note == "n")
            let error = expectError(.typeMismatch) { try db.recover(RequiredNoteProbe.self, id: 1) }
            #expect(error?.message.contains("'note'") == true)
            expectError(.typeMismatch) { try db.recover(RequiredNoteProbe.self) }
        }
    }

    /// Values SQL wrote that the attribute's type can't hold: each kind of record code refuses them as the
    /// values would have, by name, without the value; a real in a `Double` column still reads.
    @Test(arguments: [
        ("count", "'secret-text'", false), ("count", "1.5", false), ("count", "x'00'", false),
        ("total", "'secret-text'", false), ("flag", "2", false), ("flag", "-1", false),
        ("ratio", "'secret-text'", false), ("ratio", "3", true), ("title", "x'41'", false),
        ("level", "'secret-text'", false), ("small", "3000000000", false), ("note", "x'41'", false),
    ])
    func valuesOfAnotherKindAreMismatches(attribute: String, sql: String, reads: Bool) throws {
        try withTemporaryDirectory { directory in
            try open(directory, CodableProbe.self).create(stored)
            let raw = try open(directory, CodableProbe.self)
            try raw.write { context in
                _ = try context.execute("UPDATE \"Probe\" SET \"\(attribute)\" = \(sql) WHERE \"id\" = 1")
            }
            try raw.close()
            try check(CodableProbe.self, directory: directory, attribute: attribute, reads: reads)
            try check(HandWrittenProbe.self, directory: directory, attribute: attribute, reads: reads)
        }
    }

    private func check<E: Entity>(_ type: E.Type, directory: URL, attribute: String, reads: Bool) throws
    where E.ID == Int64 {
        let db = try open(directory, type)
        defer { try? db.close() }
        if reads {
            #expect(try db.recover(type, id: 1) != nil)
            #expect(try db.recover(type).count == 2)
            return
        }
        for read in [{ _ = try db.recover(type, id: 1) }, { _ = try db.recover(type) }] {
            let error = expectError(.typeMismatch, "\(type).\(attribute)") { try read() }
            #expect(error?.message.contains("'\(attribute)'") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("secret") == false)
        }
    }
}
