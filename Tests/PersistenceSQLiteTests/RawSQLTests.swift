import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistenceSQLite

struct RawSQLTests {
    @Test func runsStatementsWithBoundArguments() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.create([Note(id: 1, title: "a"), Note(id: 2, title: "b")])
            let changed = try db.write { context in
                try context.execute(
                    "UPDATE \"Note\" SET \"title\" = ? WHERE \"id\" = ?", [.text("x' OR '1'='1"), .integer(1)])
            }
            #expect(changed == 1)
            #expect(try db.recover(Note.self, id: 1)?.title == "x' OR '1'='1")
            #expect(try db.recover(Note.self, id: 2)?.title == "b")
            let rows = try db.read { try $0.rows("SELECT \"id\", \"title\" FROM \"Note\" ORDER BY \"id\"") }
            #expect(rows.map(\.values) == [[.integer(1), .text("x' OR '1'='1")], [.integer(2), .text("b")]])
            #expect(rows.first?["title"] == .text("x' OR '1'='1"))
            #expect(try db.read { try $0.scalar("SELECT count(*) FROM \"Note\"") } == .integer(2))
        }
    }

    @Test func refusesSecondStatementsAndBadSQL() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.create(Note(id: 1, title: "a"))
            try db.write { context in
                expectError(.invalidStatement) { try context.execute("DELETE FROM \"Note\"; DROP TABLE \"Note\"") }
                expectError(.invalidStatement) { try context.execute("SELEC nonsense") }
                expectError(.invalidArgument) { try context.execute("SELECT ?", []) }
            }
            #expect(try db.count(Note.self) == 1)
        }
    }

    @Test func refusesChangesInReadTransactions() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.read { context in
                expectError(.readOnly) { try context.execute("DELETE FROM \"Note\"") }
                #expect(!context.isWritable)
            }
        }
    }

    @Test func equalityAndPrefixUseIndexes() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            let layout = try RecordLayout(EntityDescription(describing: Note.self))
            let mapping = TableMapping(index: 0, layout: layout)
            for condition in [Field("title") == "x", Field("title").hasPrefix("x"), Field("id") == 3] {
                var compiler = ConditionCompiler(mapping: mapping)
                let sql = try compiler.select(Query(where: condition).resolve(in: layout))
                let plan = try db.read { try $0.rows("EXPLAIN QUERY PLAN " + sql, compiler.arguments) }
                let details = plan.compactMap { $0["detail"] }.map(text).joined(separator: " | ")
                #expect(details.contains("USING"), "\(condition): \(details)")
                #expect(!details.hasPrefix("SCAN"), "\(condition): \(details)")
            }
        }
    }

    @Test func refusesMoreValuesThanSQLiteBinds() throws {
        try withTemporaryDirectory { directory in
            let db = try builder(directory).create()
            try db.create(Note(id: 1, title: "a"))
            // Above both SQLite's default limit (32,766) and Debian's build (250,000).
            let many = (0..<300_000).map { Int64($0) }
            expectError(.invalidArgument) { let _: [Note] = try db.recover(where: Field("id").in(many)) }
            let fits: [Note] = try db.recover(where: Field("id").in(Array(many.prefix(30_000))))
            #expect(fits.map(\.id) == [1])
        }
    }

    @Test func prefixUpperBoundsAreExact() {
        #expect("".prefixUpperBound == nil)
        #expect("ab".prefixUpperBound == "ac")
        #expect("a\u{D7FF}".prefixUpperBound == "a\u{E000}")
        #expect("a\u{10FFFF}".prefixUpperBound == "b")
        #expect("\u{10FFFF}".prefixUpperBound == nil)
    }
}
