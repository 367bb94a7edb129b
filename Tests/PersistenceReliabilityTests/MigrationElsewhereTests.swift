import Foundation
import PersistenceLMDB
import PersistenceTestProcesses
import PersistenceTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A database that stays open while another process migrates its store (LMDB, whose migration commits in steps):
/// its writes during the migration are refused (`busy`) rather than lost at the switch, its reads see the store as it
/// was, and once the migration is done it refuses to read or write the store it no longer knows
/// (`invalidConfiguration`) instead of reading databases that are gone.
@Suite("a migration by another process")
struct MigrationElsewhereTests {
    /// The worker's `migrate` entity at schema version 1, declared again with the same schema.
    struct Migrant: Entity, Equatable {
        var id: Int64
        var name: String
        var amount: String
        var note: String
        static let indexes: [Index] = [.on("name")]

        /// The same values as the worker's, so that its check counts these records as its own.
        static func expected(_ id: Int64) -> Migrant {
            Migrant(
                id: id, name: "name \(id)", amount: String(id * 7 % 1000),
                note: "note \(id) " + String(repeating: "n", count: id % 50 == 0 ? 2500 : Int(id % 200)))
        }
    }

    struct Summary: Decodable {
        var state: String
        var records: Int
        var consistent: Bool
    }

    @Test("writes meanwhile are busy, never lost; afterwards the old database refuses the store")
    func openDuringMigration() throws {
        let seeded: Int64 = 40_000
        try withTemporaryDirectory { directory in
            let store = directory.appendingPathComponent("store")
            let (_, made) = try WorkerProcess.run(
                ["migrate", "--directory", store.path, "--seed", String(seeded)],
                errorFile: directory.appendingPathComponent("seed.stderr"))
            try #require(made == .exit(0))

            var builder = LMDBBuilder(
                databaseName: "Reliability", passphrase: "migrate", model: Model(version: 1, entities: [Migrant.self]))
            builder.directory = store
            builder.keyDerivation = .scrypt(logN: 10, blockSize: 8, parallelism: 1)
            let db = try builder.create()
            defer { try? db.close() }

            let worker = try WorkerProcess(
                ["migrate", "--directory", store.path], errorFile: directory.appendingPathComponent("migrate.stderr"))
            var written = seeded
            var busy = 0
            var refusal: PersistenceError?
            let deadline = Date().addingTimeInterval(300)
            while refusal == nil && Date() < deadline {
                do {
                    try db.write { try $0.create(Migrant.expected(written + 1)) }
                    written += 1
                    // What this database reads is the store before the migration, whole.
                    #expect(try db.count(Migrant.self) == Int(written))
                } catch let error as PersistenceError where error.code == .busy {
                    busy += 1
                    #expect(try db.count(Migrant.self) == Int(written), "a read during the migration")
                } catch let error as PersistenceError where error.code == .invalidConfiguration {
                    refusal = error
                }
                usleep(500)
            }
            let output = worker.remainingLines()
            let termination = worker.wait()
            try #require(termination == .exit(0), "\(output): \(worker.errors)")
            let refused = try #require(refusal, "the old database went on writing after the migration")
            #expect(refused.message.contains("another process migrated the store"), "\(refused)")
            #expect(busy > 0, "no write fell inside the migration's steps")
            #expect(output.last == "migrated \(written)", "a write acknowledged before the migration was lost")

            // Reads are refused too, and go on being refused.
            #expect(throws: PersistenceError.self) { try db.count(Migrant.self) }
            #expect(throws: PersistenceError.self) { try db.write { try $0.create(Migrant.expected(written + 1)) } }

            let (lines, checked) = try WorkerProcess.run(
                ["migrate", "--directory", store.path, "--check"],
                errorFile: directory.appendingPathComponent("check.stderr"))
            try #require(checked == .exit(0))
            let summary = try JSONDecoder().decode(Summary.self, from: Data(try #require(lines.last).utf8))
            #expect(summary.state == "new" && summary.consistent && summary.records == Int(written), "\(summary)")
            print(
                "migration by another process: \(written - seeded) writes before it, \(busy) refused as busy during "
                    + "it, then \(refused.code)")
        }
    }
}
