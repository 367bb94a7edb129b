import ArgumentParser
import Foundation
import PersistenceLMDB
import PersistenceSQLite

/// `migrate`: a store of `MigrantV1` records (`--seed N` writes them), migrated to `MigrantV2` when opened — on
/// encrypted LMDB by a migration block, on SQLite by a migration plan with a mapping model, or the other way round
/// (`--swapped`) — and killed at random
/// points by the test; `--check` prints which schema the store is in and whether every record is exactly as that
/// schema's version of it must be.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seed, migrate (v1 → v2) or check a store; the test kills 'migrate' at random.")

    @Option(help: "The storage backend: lmdb (encrypted, migration block) or sqlite (mapping model).")
    var backend: WorkerBackend = .lmdb

    @Option(help: "The directory that holds the store.")
    var directory: String

    @Option(help: "Write this many v1 records to a new store, and stop.")
    var seed: Int64?

    @Flag(help: "Print a JSON summary of the store's state instead of migrating.")
    var check = false

    @Flag(
        help: """
            LMDB: migrate from a 1 MiB map, which the migration outgrows several times, with a block that also \
            creates a companion per migrant (the model of version 2 has them).
            """)
    var grows = false

    @Flag(
        help: """
            Swap the migration's forms: LMDB migrates by the migration plan (a mapping model), SQLite by the \
            migration block.
            """)
    var swapped = false

    static let passphrase = "migrate"

    func run() throws {
        if let seed {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: directory, isDirectory: true), withIntermediateDirectories: true)
            try open(MigrantV1.model, SeedWork(count: max(1, seed)))
        } else if check {
            try WorkerOutput.json(summary())
        } else {
            WorkerOutput.line("opening")
            let count = try open(version2, migrating: true, CountWork<MigrantV2>())
            WorkerOutput.line("migrated \(count)")
        }
    }

    /// The model of schema version 2: with the companions when the migration grows the map.
    private var version2: Model { grows ? MigrantV2.grownModel : MigrantV2.model }

    /// Opens the store with `model` and runs `work` on it; `migrating` gives the builder what migrates a v1 store.
    private func open<W: StoreWork>(_ model: Model, migrating: Bool = false, _ work: W) throws -> W.Output {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        switch backend {
        case .sqlite:
            var builder = SQLiteBuilder(databaseName: StoreOptions.databaseName, model: model)
            builder.directory = url
            if migrating {
                if swapped {
                    builder.migrationBlock = MigrantV2.migration
                } else {
                    builder.migrationPlan = MigrantV2.plan
                }
            }
            return try work.run(builder.create())
        case .lmdb, .lmdbPlain:
            var builder = LMDBBuilder(
                databaseName: StoreOptions.databaseName, passphrase: Self.passphrase, model: model)
            builder.directory = url
            builder.keyDerivation = .scrypt(logN: 10, blockSize: 8, parallelism: 1)
            if migrating {
                if swapped {
                    builder.migrationPlan = MigrantV2.plan
                } else {
                    builder.migrationBlock = grows ? MigrantV2.growingMigration : MigrantV2.migration
                }
            }
            // Not when seeding: one write of every record would fill a map that small.
            if grows && seed == nil { builder.initialMapSize = 1 << 20 }
            return try work.run(builder.create())
        }
    }

    /// The store as a v1 app sees it when it still opens; else as a v2 app (nothing left to migrate).
    private func summary() -> MigrationSummary {
        do {
            return try open(
                MigrantV1.model, SummaryWork<MigrantV1>(state: "old", indexed: Field("name") == "name 1") { _ in 1 })
        } catch let error as PersistenceError where error.code == .invalidConfiguration {
            do {
                return try open(
                    version2,
                    SummaryWork<MigrantV2>(state: "new", indexed: Field("amount") == 7, companions: grows) { records in
                        records.count { $0.amount == 7 }
                    })
            } catch {
                return MigrationSummary(state: "unreadable", records: 0, consistent: false, errorCode: errorCode(error))
            }
        } catch {
            return MigrationSummary(state: "unreadable", records: 0, consistent: false, errorCode: errorCode(error))
        }
    }
}

/// A migrant of either version: its expected value by id.
protocol Migrant: Entity, Equatable {
    static func expected(_ id: Int64) -> Self
}

extension MigrantV1: Migrant {}
extension MigrantV2: Migrant {}

private struct SeedWork: StoreWork {
    let count: Int64
    func run<D: Database>(_ db: D) throws {
        try db.write { context in
            for id in 1...count { try context.create(MigrantV1.expected(id)) }
        }
    }
}

private struct CountWork<M: Migrant>: StoreWork {
    func run<D: Database>(_ db: D) throws -> Int { try db.count(M.self) }
}

/// Every record, the index and the store's integrity, against what `M`'s version must hold.
private struct SummaryWork<M: Migrant>: StoreWork {
    let state: String
    /// A query an index answers, and how many records it must count.
    let indexed: Condition
    /// Whether the store must hold each record's companion too (`migrate --grows`, migrated).
    var companions = false
    let expectedCount: ([M]) -> Int
    func run<D: Database>(_ db: D) throws -> MigrationSummary {
        let records: [M] = try db.recover()
        let sound = try db.verify().isSound
        let indexedCount = try db.count(M.self, where: indexed)
        var companionsRight = true
        if companions {
            let stored: [Companion] = try db.recover()
            let owned = try db.count(Companion.self, where: Field("ownerID") == 7)
            companionsRight =
                stored.count == records.count && owned == (records.count >= 7 ? 1 : 0)
                && stored.enumerated().allSatisfy { $0.element == Companion.expected(Int64($0.offset + 1)) }
        }
        return MigrationSummary(
            state: state, records: records.count,
            consistent: records.enumerated().allSatisfy { $0.element == M.expected(Int64($0.offset + 1)) }
                && indexedCount == expectedCount(records) && sound && companionsRight)
    }
}

/// What `migrate --check` prints.
struct MigrationSummary: Codable {
    /// `old` (schema version 1), `new` (version 2) or `unreadable`.
    var state: String
    /// How many records the store holds.
    var records: Int
    /// Whether every record, the index and the store's integrity are exactly right for that state.
    var consistent: Bool
    /// The code of the error that stopped the check, if one did.
    var errorCode: String?
}
