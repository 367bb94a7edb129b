import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceTesting
import Testing

/// Raw SQL in an observed read on PostgreSQL: its tables can't be inferred, so what it reads must be named.
struct ObservedRawSQLTests {
    @Test func aRawReadTrackingNothingThrowsUntrackedReadAndOneNamingItsTablesIsTracked() async throws {
        let builder = try freshBuilder([Item.self], "obs")
        let db = try builder.create()
        // Raw SQL names the builder's schema itself.
        let items = "SELECT count(*) FROM \"\(builder.schema)\".\"Item\""
        var untracked = ValueObservation.tracking { (context: PostgresContext) in try context.scalar(items) }
            .values(in: db).makeAsyncIterator()
        await expectAsyncError(.untrackedRead) { try await untracked.next() }
        var tracked = db.observe(tracking: [Item.self]) { try $0.scalar(items) }.makeAsyncIterator()
        #expect(try await tracked.next() == .integer(0))
        try await db.write { try $0.create(Item(id: 1, label: "a")) }
        #expect(try await tracked.next() == .integer(1))
    }
}
