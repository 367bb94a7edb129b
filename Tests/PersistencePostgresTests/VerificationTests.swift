import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceTesting
import Testing

/// `verify()` against a table changed behind the model's back: what the catalog says is compared with the entity.
struct VerificationTests {
    struct Note: Entity, Equatable {
        var id: Int64
        var title: String
        var body: String?
        static let indexes: [Index] = [.on("title")]
    }

    @Test func reportsTheTableAndIndexesChangedBehindTheModel() async throws {
        try await offPool {
            let builder = try freshBuilder([Note.self], "v")
            let db = try builder.create()
            defer {
                try? db.close()
                _ = try? builder.deleteStore()
            }
            try db.create((1...3).map { Note(id: $0, title: "t\($0)", body: nil) })
            #expect(try db.verify().isSound)
            let table = "\"\(builder.schema)\".\"Note\""
            try db.write { context in
                for sql in [
                    "DROP INDEX \"\(builder.schema)\".\"index_Note_title\"",
                    "ALTER TABLE \(table) ALTER COLUMN \"title\" DROP NOT NULL",
                    "ALTER TABLE \(table) ADD COLUMN \"extra\" bigint",
                    "CREATE UNIQUE INDEX \"undeclared\" ON \(table) (\"body\")",
                ] {
                    try context.execute(sql)
                }
            }
            let report = try db.verify()
            let found = report.problems.map { "\($0.kind) \($0.attribute ?? $0.index ?? "-")" }
            #expect(
                found.sorted() == [
                    "schemaMismatch -", "schemaMismatch index_Note_title", "schemaMismatch title",
                    "schemaMismatch undeclared",
                ], "\(report)")
            #expect(report.problems.contains { $0.message.contains("'extra'") })
            #expect(report.recordsChecked == 3)
        }
    }
}
