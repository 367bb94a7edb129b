import Foundation
import PersistenceCore
import PersistenceSQL

/// Brings a store written with an older model version up to the builder's model at start-up: plans every step of
/// the chain (refusing, before any change, a step that can't be done), backs the store up before a heavyweight
/// step, then runs the steps in the transaction that opens the store.
final class SQLiteMigration {
    let chain: MigrationChain
    /// Where the backup of a store at a version goes; `nil` for no backup.
    let backupFile: ((Int) -> URL)?
    /// The backup this run made, removed again when the migration fails (the store is then unchanged).
    private var madeBackup: URL?

    init(
        plan: MigrationPlan?, model: Model, progress: MigrationProgressHandler?, backupFile: ((Int) -> URL)?
    ) throws {
        chain = try MigrationChain(plan: plan, model: model, progress: progress)
        self.backupFile = backupFile
    }

    /// Thrown by ``run(on:stored:storedVersion:model:current:dryRun:)`` before any change when the store must be
    /// backed up first, outside the transaction.
    struct BackupFirst: Error {
        let file: URL
    }

    /// Copies the store, outside any transaction, to the file ``BackupFirst`` named.
    func makeBackup(_ connection: Connection, to file: URL) throws {
        try StoreBackup.copy(from: connection, to: file)
        madeBackup = file
    }

    /// Removes the backup this run made.
    func discardBackup() {
        if let madeBackup { try? FileManager.default.removeItem(at: madeBackup) }
        madeBackup = nil
    }

    /// Plans and runs every step from `storedVersion` to `model`, in the open transaction.
    /// - Returns: The report, or `nil` when no step changes anything but the version.
    func run(
        on connection: Connection, stored: [EntityDescription], storedVersion: Int, model: Model,
        current: [RecordLayout], dryRun: Bool
    ) throws -> MigrationReport? {
        // Every step is planned before anything changes: a step that can't be done is refused with the store as
        // it was.
        guard
            let plans = try chain.plans(
                stored: stored, storedVersion: storedVersion, model: model, current: current)
        else { return nil }
        if !dryRun, let backupFile, plans.contains(where: { $0.kind == .mapped }) {
            let file = backupFile(storedVersion)
            // SQLite's backup can't read a database its connection is writing: the caller rolls back, makes the
            // backup, and prepares the store again.
            guard madeBackup == file else { throw BackupFirst(file: file) }
        }
        return try chain.run(plans, from: storedVersion, to: model.version) { plan in
            SQLiteMigrationStep(connection: connection, plan: plan)
        }
    }
}
