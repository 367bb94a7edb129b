import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// Brings a store written with an older model version up to the builder's model at start-up: plans every step of
/// the chain from a read-only look at the store (refusing, before any change, a step that can't be done), backs the
/// store up before a heavyweight step, then runs the planned steps in the transaction that opens the store.
final class SQLiteMigration {
    let chain: MigrationChain
    /// The builder's migration block: run instead of the plan's steps.
    let block: MigrationBlock?
    /// Where the backup of a store at a version goes; `nil` for no backup.
    let backupFile: ((Int) -> URL)?
    /// The backup this run made, removed again when the migration fails (the store is then unchanged).
    private var madeBackup: URL?

    init(
        plan: MigrationPlan?, block: MigrationBlock?, model: Model, progress: MigrationProgressHandler?,
        backupFile: ((Int) -> URL)?
    ) throws {
        chain = try MigrationChain(plan: plan, model: model, progress: progress)
        self.block = block
        self.backupFile = backupFile
    }

    /// Plans every step from `storedVersion` to `model` (read-only): a step that can't be done is refused here, with
    /// the store as it was.
    /// - Returns: The steps, or `nil` when no step changes anything but the version.
    func plans(stored: [EntityDescription], storedVersion: Int, model: Model, current: [RecordLayout]) throws
        -> [MigrationStepPlan]?
    {
        try chain.plans(stored: stored, storedVersion: storedVersion, model: model, current: current)
    }

    /// Backs the store up — outside any transaction, before the one that migrates (SQLite's backup can't read a
    /// database its connection is writing) — when its planned steps include a mapped one and the builder keeps
    /// backups; a backup already made for this version is kept.
    func backUpIfNeeded(_ connection: Connection, plans: [MigrationStepPlan]?, from storedVersion: Int) throws {
        guard let backupFile, block != nil || plans?.contains(where: { $0.kind == .mapped }) == true else { return }
        let file = backupFile(storedVersion)
        guard madeBackup != file else { return }
        discardBackup()
        try StoreBackup.copy(from: connection, to: file)
        madeBackup = file
    }

    /// Removes the backup this run made.
    func discardBackup() {
        if let madeBackup { try? FileManager.default.removeItem(at: madeBackup) }
        madeBackup = nil
    }

    /// Runs the migration block from `storedVersion` (schema `stored`) to `model`, in the open transaction.
    func runBlock(
        _ block: MigrationBlock, stored: [EntityDescription], on connection: Connection, from storedVersion: Int,
        model: Model, current: [RecordLayout]
    ) throws -> MigrationReport {
        let run = try BlockMigrationRun(
            stored: stored, current: current, scratch: SQLiteMigrationScratch(connection: connection),
            from: storedVersion, to: model.version, progress: chain.progress)
        try Migration.run(block, on: run, from: storedVersion, to: model.version)
        return try run.finish { plan in SQLiteMigrationStep(connection: connection, plan: plan) }
    }

    /// Runs planned steps from `storedVersion` to `model`'s version, in the open transaction.
    func run(_ plans: [MigrationStepPlan], on connection: Connection, from storedVersion: Int, model: Model) throws
        -> MigrationReport
    {
        try chain.run(plans, from: storedVersion, to: model.version) { plan in
            SQLiteMigrationStep(connection: connection, plan: plan)
        }
    }
}
