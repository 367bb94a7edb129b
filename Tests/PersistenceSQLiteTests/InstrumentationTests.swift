import Foundation
import Logging
import MetricsTestKit
import PersistenceCore
import PersistenceSQLite
import PersistenceTesting
import Testing

/// Logging and metrics: what a SQLite database reports, and that no stored value is ever in a log line.
struct InstrumentationTests {
    static let secrets = ["Zq7-secret-title", "Zq7-secret-body", "Zq7-literal-in-raw-sql", "Zq7-renamed-title"]

    struct NoteV2: Entity, Equatable {
        var id: Int64
        var title: String
        var body: String?
        var rating: Int?
        static var entityName: String { "Note" }
    }

    @Test func logsOperationsAndMigrationsWithoutValues() throws {
        try withTemporaryDirectory { directory in
            let log = CapturedLog()
            let metrics = TestMetrics()
            do {
                var v1 = builder(directory)
                v1.logger = log.logger(level: .trace)
                v1.metricsFactory = metrics
                let db = try v1.create()
                try db.create(Note(id: 1, title: Self.secrets[0], body: Self.secrets[1]))
                try db.write { context in
                    try context.update(Note(id: 1, title: Self.secrets[3], body: nil))
                    try context.execute("UPDATE \"Note\" SET \"body\" = '\(Self.secrets[2])'")
                }
                let found: [Note] = try db.recover(where: Field("title") == Self.secrets[3])
                #expect(found.count == 1)
                #expect(throws: (any Error).self) {
                    try db.write { context in try context.create(Note(id: 1, title: Self.secrets[0], body: nil)) }
                }
                try db.write { try $0.setAlias("favourite", to: Note.self, id: 1) }
            }
            do {
                var v2 = SQLiteBuilder(databaseName: "Notes", model: Model(version: 2, entities: [NoteV2.self]))
                v2.directory = directory
                v2.logger = log.logger(level: .info)
                v2.metricsFactory = metrics
                let db = try v2.create()
                #expect(try db.count(NoteV2.self) == 1)
            }

            let text = log.text
            #expect(text.contains("INSERT INTO \"Note\""), "typed operations are traced with their SQL")
            #expect(text.contains("write transaction committed"))
            #expect(text.contains("write transaction rolled back"))
            #expect(text.contains("raw SQL statement (text not logged)"))
            #expect(text.contains("migrated the store") && text.contains("to_version=2"))
            #expect(text.contains("persistence.backend=sqlite") && text.contains("persistence.store=Notes"))
            for secret in Self.secrets {
                #expect(!text.contains(secret), "a log line holds the stored value '\(secret)'")
            }
            #expect(!text.contains("Zq7"))

            let dimensions = [("backend", "sqlite"), ("store", "Notes")]
            let committed = try metrics.expectCounter(
                "persistence_transactions", dimensions + [("kind", "write"), ("outcome", "committed")])
            #expect(committed.totalValue == 3)
            let rolledBack = try metrics.expectCounter(
                "persistence_transactions", dimensions + [("kind", "write"), ("outcome", "rolledBack")])
            #expect(rolledBack.totalValue == 1)
            let reads = try metrics.expectCounter(
                "persistence_transactions", dimensions + [("kind", "read"), ("outcome", "committed")])
            #expect(reads.totalValue >= 2)
            let durations = try metrics.expectTimer(
                "persistence_transaction_duration", dimensions + [("kind", "write")])
            #expect(durations.values.count == 4 && durations.values.allSatisfy { $0 > 0 })
            #expect(try metrics.expectCounter("persistence_migrations", dimensions).totalValue == 1)
        }
    }

    @Test func logsAndRecordsNothingByDefault() throws {
        try withTemporaryDirectory { directory in
            let metrics = TestMetrics()
            let db = try builder(directory).create()
            try db.create(Note(id: 1, title: "t", body: nil))
            #expect(metrics.counters.isEmpty && metrics.timers.isEmpty)
        }
    }
}
