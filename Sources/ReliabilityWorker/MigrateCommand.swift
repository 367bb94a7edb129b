import ArgumentParser
import Foundation
import PersistenceLMDB

/// `migrate`: an encrypted LMDB store of `MigrantV1` records (`--seed N` writes them), migrated to `MigrantV2` by a
/// migration block when opened — killed at random points by the test; `--check` prints which schema the store is in
/// and whether every record is exactly as that schema's version of it must be.
struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Seed, migrate (v1 → v2) or check an encrypted LMDB store; the test kills 'migrate' at random.")

    @Option(help: "The directory that holds the store.")
    var directory: String

    @Option(help: "Write this many v1 records to a new store, and stop.")
    var seed: Int64?

    @Flag(help: "Print a JSON summary of the store's state instead of migrating.")
    var check = false

    static let passphrase = "migrate"

    func run() throws {
        if let seed {
            try FileManager.default.createDirectory(
                at: URL(fileURLWithPath: directory, isDirectory: true), withIntermediateDirectories: true)
            let db = try builder(MigrantV1.model).create()
            try db.write { context in
                for id in 1...max(1, seed) { try context.create(MigrantV1.expected(id)) }
            }
        } else if check {
            try WorkerOutput.json(summary())
        } else {
            WorkerOutput.line("opening")
            var builder = builder(MigrantV2.model)
            builder.migrationBlock = MigrantV2.migration
            let db = try builder.create()
            WorkerOutput.line("migrated \(try db.count(MigrantV2.self))")
        }
    }

    private func builder(_ model: Model) -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: StoreOptions.databaseName, passphrase: Self.passphrase, model: model)
        builder.directory = URL(fileURLWithPath: directory, isDirectory: true)
        builder.keyDerivation = .scrypt(logN: 10, blockSize: 8, parallelism: 1)
        return builder
    }

    /// The store as a v1 app sees it when it still opens; else as a v2 app (without a block: nothing to migrate).
    private func summary() -> MigrationSummary {
        do {
            let db = try builder(MigrantV1.model).create()
            let records: [MigrantV1] = try db.recover()
            let indexed = try db.count(MigrantV1.self, where: Field("name") == "name 1")
            let sound = try db.verify().isSound
            return MigrationSummary(
                state: "old", records: records.count,
                consistent: records.enumerated().allSatisfy { $0.element == MigrantV1.expected(Int64($0.offset + 1)) }
                    && indexed == 1 && sound)
        } catch let error as PersistenceError where error.code == .invalidConfiguration {
            do {
                let db = try builder(MigrantV2.model).create()
                let records: [MigrantV2] = try db.recover()
                let indexed = try db.count(MigrantV2.self, where: Field("amount") == 7)
                let sound = try db.verify().isSound
                return MigrationSummary(
                    state: "new", records: records.count,
                    consistent: records.enumerated().allSatisfy {
                        $0.element == MigrantV2.expected(Int64($0.offset + 1))
                    } && indexed == records.count(where: { $0.amount == 7 }) && sound)
            } catch {
                return MigrationSummary(state: "unreadable", records: 0, consistent: false, errorCode: errorCode(error))
            }
        } catch {
            return MigrationSummary(state: "unreadable", records: 0, consistent: false, errorCode: errorCode(error))
        }
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
