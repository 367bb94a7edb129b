import Foundation
import PersistenceCore

/// Brings a store written with an older model version up to the builder's model at start-up: plans every step of
/// the chain (refusing, before any change, a step that can't be done), backs the store up before a heavyweight
/// step, then runs the steps in the transaction that opens the store.
final class SQLiteMigration {
    /// The plan's older versions, checked, with their layouts.
    let declared: [(model: Model, layouts: [RecordLayout])]
    let plan: MigrationPlan
    let progress: MigrationProgressHandler?
    /// Where the backup of a store at a version goes; `nil` for no backup.
    let backupFile: ((Int) -> URL)?
    /// The backup this run made, removed again when the migration fails (the store is then unchanged).
    private var madeBackup: URL?

    init(
        plan: MigrationPlan?, model: Model, progress: MigrationProgressHandler?, backupFile: ((Int) -> URL)?
    ) throws {
        let plan = plan ?? MigrationPlan(models: [])
        declared = try plan.validated(current: model)
        self.plan = plan
        self.progress = progress
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
        let storedLayouts = stored.map { RecordLayout($0) }
        if let declaredVersion = declared.first(where: { $0.model.version == storedVersion }) {
            let declaredSchema = declaredVersion.layouts.map(\.entity)
            guard
                declaredSchema.map(\.normalized).sorted(by: { $0.name < $1.name })
                    == stored.map(\.normalized).sorted(by: { $0.name < $1.name })
            else {
                throw PersistenceError(
                    .invalidSchema,
                    "the store's schema at model version \(storedVersion) is not the migration plan's version "
                        + "\(storedVersion): "
                        + SchemaDifference(stored: stored, current: declaredSchema).summary
                        + "; declare that version as it shipped")
            }
        }
        // Every step is planned before anything changes: a step that can't be done is refused with the store as
        // it was.
        let plans = try plan.steps(from: storedVersion, declared: declared, current: model, currentLayouts: current)
            .map { step in
                try MigrationStepPlan(
                    fromVersion: step.fromVersion, toVersion: step.toVersion, source: step.source ?? storedLayouts,
                    destination: step.destination, mapping: step.mapping)
            }
        guard plans.contains(where: { !$0.changesNothing || $0.kind == .mapped }) else { return nil }
        if !dryRun, let backupFile, plans.contains(where: { $0.kind == .mapped }) {
            let file = backupFile(storedVersion)
            // SQLite's backup can't read a database its connection is writing: the caller rolls back, makes the
            // backup, and prepares the store again.
            guard madeBackup == file else { throw BackupFirst(file: file) }
        }
        var steps: [MigrationReport.Step] = []
        for plan in plans {
            do {
                steps.append(try SQLiteMigrationStep(connection: connection, plan: plan, progress: progress).run())
            } catch let error as PersistenceError where [.migrationFailed, .storageFull].contains(error.code) {
                throw error
            } catch let cancellation as CancellationError where CancellationFlag.current?.isCancelled == true {
                // The awaiting task was cancelled: not a failure of the migration code (which, throwing
                // CancellationError of its own accord, still fails as migrationFailed).
                throw cancellation
            } catch {
                throw PersistenceError(
                    .migrationFailed,
                    "migration step \(plan.fromVersion) → \(plan.toVersion) failed: "
                        + ((error as? PersistenceError)?.message ?? "it threw \(type(of: error))"),
                    nativeCode: (error as? PersistenceError)?.nativeCode,
                    nativeMessage: (error as? PersistenceError)?.nativeMessage, underlyingError: error)
            }
        }
        return Self.report(from: storedVersion, to: model.version, steps)
    }

    /// The whole chain's report: the first step's records before, the last step's after.
    private static func report(from: Int, to: Int, _ steps: [MigrationReport.Step]) -> MigrationReport {
        let first = steps.first?.entities ?? []
        let last = steps.last?.entities ?? []
        var names = first.map(\.name)
        for entity in last where !names.contains(entity.name) { names.append(entity.name) }
        let entities = names.map { name in
            MigrationReport.EntityCounts(
                name: name, recordsBefore: first.first { $0.name == name }?.recordsBefore ?? 0,
                recordsAfter: last.first { $0.name == name }?.recordsAfter ?? 0,
                recordsRewritten: last.first { $0.name == name }?.recordsRewritten ?? 0)
        }
        return MigrationReport(
            fromVersion: from, toVersion: to,
            changes: steps.flatMap { step in step.changes.map { "\(step.fromVersion) → \(step.toVersion): \($0)" } },
            entities: entities, steps: steps)
    }
}
