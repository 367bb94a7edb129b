import Foundation
import Logging
import MetricsTestKit
import PersistenceTesting
import Testing

@testable import PersistenceLMDB

/// Logging and metrics: what an encrypted LMDB database reports — map growth, migrations, refused passphrases,
/// tampered values — and that no value or passphrase is ever in a log line.
struct InstrumentationTests {
    static let passphrase = "Zq7-correct-passphrase"
    static let wrongPassphrase = "Zq7-wrong-passphrase"

    struct SecretV2: Entity, Equatable {
        var id: Int64
        var note: String
        var tag: String
        var flagged: Bool?
        static var entityName: String { "Secret" }
        static let indexes: [Index] = [.on("tag"), .unique("note")]
    }

    @Test func logsGrowthMigrationsAndFailuresWithoutSecrets() throws {
        try withTemporaryDirectory { directory in
            let log = CapturedLog()
            let metrics = TestMetrics()
            var v1 = secrets(directory, passphrase: Self.passphrase)
            v1.logger = log.logger(level: .trace)
            v1.metricsFactory = metrics
            v1.initialMapSize = 1 << 20
            do {
                let db = try v1.create()
                // Enough to outgrow a 1 MiB map several times, in separate writes.
                for batch in 0..<8 {
                    try db.create(
                        (0..<500).map { index in
                            let id = Int64(batch * 500 + index)
                            return Secret(
                                id: id, note: "Zq7-note-\(id)-" + String(repeating: "x", count: 200), tag: "Zq7-tag")
                        })
                }
            }
            var wrong = v1
            wrong.passphrase = Self.wrongPassphrase
            expectError(.wrongPassphrase) { try wrong.create() }
            var v2 = v1
            v2.model = Model(version: 2, entities: [SecretV2.self])
            v2.migrationBlock = { _, _ in }
            let db = try v2.create()
            #expect(try db.count(SecretV2.self) == 4_000)
            // Tamper with one record: reading it fails authentication, and is counted.
            try db.write { context in
                var bytes = try #require(try context.storedBytes(of: SecretV2.self, id: 7))
                bytes[bytes.count - 1] ^= 1
                try context.overwriteStoredBytes(of: SecretV2.self, id: 7, with: bytes)
            }
            expectError(.authenticationFailed) { try db.recover(SecretV2.self, id: 7) }

            let text = log.text
            #expect(text.contains("the memory map grew"))
            #expect(text.contains("migrated the store") && text.contains("to_version=2"))
            #expect(text.contains("a passphrase was refused"))
            #expect(text.contains("failed authentication") && text.contains("entity=Secret"))
            #expect(text.contains("insert") && text.contains("write transaction committed"))
            #expect(!text.contains("Zq7"), "a log line holds a stored value or a passphrase")

            let dimensions = [("backend", "lmdb"), ("store", "Secrets")]
            #expect(try metrics.expectCounter("persistence_map_growths", dimensions).totalValue >= 1)
            #expect(try metrics.expectGauge("persistence_map_size", dimensions).lastValue ?? 0 > Double(1 << 20))
            #expect(try metrics.expectCounter("persistence_migrations", dimensions).totalValue == 1)
            let failures = dimensions + [("kind", "passphrase")]
            #expect(try metrics.expectCounter("persistence_authentication_failures", failures).totalValue == 1)
            let tampered = dimensions + [("kind", "value")]
            #expect(try metrics.expectCounter("persistence_authentication_failures", tampered).totalValue == 1)
            let writes = try metrics.expectCounter(
                "persistence_transactions", dimensions + [("kind", "write"), ("outcome", "committed")])
            #expect(writes.totalValue == 9)  // eight batches and the tampering
        }
    }
}
