package import PersistenceCore

/// A mapping-model migration from a store's version to the current model, as a backend runs it at start-up: the
/// plan checked once, every step planned before anything changes, the steps run in order, their failures named,
/// and one report for the chain.
///
/// The backend supplies the transaction (the whole chain runs in the one that opens the store) and each step's
/// storage through a ``MigrationStepBackend``.
package struct MigrationChain {
    /// The plan's older versions, checked, with their layouts.
    package let declared: [(model: Model, layouts: [RecordLayout])]
    package let plan: MigrationPlan
    package let progress: MigrationProgressHandler?
    /// Whether the backend's records hold their values by position (see ``MigrationStepPlan``).
    package let positionalRecords: Bool

    /// Checks `plan` against the current model (before anything touches the store).
    package init(
        plan: MigrationPlan?, model: Model, progress: MigrationProgressHandler?, positionalRecords: Bool = false
    ) throws {
        let plan = plan ?? MigrationPlan(models: [])
        declared = try plan.validated(current: model)
        self.plan = plan
        self.progress = progress
        self.positionalRecords = positionalRecords
    }

    /// Plans every step from a store at `storedVersion` (schema `stored`) to `model`: a step that can't be done is
    /// refused here, with the store as it was.
    /// - Returns: The steps, or `nil` when none changes anything but the stored version.
    /// - Throws: ``PersistenceError/Code/invalidSchema`` when the plan declares the stored version with another
    ///   schema, and what ``MigrationStepPlan`` throws.
    package func plans(
        stored: [EntityDescription], storedVersion: Int, model: Model, current: [RecordLayout]
    ) throws -> [MigrationStepPlan]? {
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
        let plans = try plan.steps(from: storedVersion, declared: declared, current: model, currentLayouts: current)
            .map { step in
                try MigrationStepPlan(
                    fromVersion: step.fromVersion, toVersion: step.toVersion, source: step.source ?? storedLayouts,
                    destination: step.destination, mapping: step.mapping, positionalRecords: positionalRecords)
            }
        return plans.contains(where: { !$0.changesNothing || $0.kind == .mapped }) ? plans : nil
    }

    /// Runs planned steps in order, each on the storage `backend(plan)` gives; returns the chain's report.
    /// - Throws: ``PersistenceError/Code/migrationFailed`` naming the step (the cause kept), `storageFull` as
    ///   itself, and the `CancellationError` of a cancelled open.
    package func run(
        _ plans: [MigrationStepPlan], from storedVersion: Int, to version: Int,
        on backend: (MigrationStepPlan) throws -> any MigrationStepBackend
    ) throws -> MigrationReport {
        var steps: [MigrationReport.Step] = []
        for plan in plans {
            steps.append(
                try plan.failing(nil) {
                    try MigrationStepRunner(backend: backend(plan), plan: plan, progress: progress).run()
                })
        }
        return Self.report(from: storedVersion, to: version, steps)
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

extension MigrationStepPlan {
    /// Runs `body`, turning what it throws into ``PersistenceError/Code/migrationFailed`` naming the step and `what`
    /// (the cause kept) — except a migration failure already named, `storageFull`, a conflict or a server's dropped
    /// connection (starting again may succeed), and the cancellation of the awaiting task (not a failure of
    /// the migration code, which throwing `CancellationError` of its own accord still fails as `migrationFailed`).
    package func failing<T>(_ what: String?, _ body: () throws -> T) throws -> T {
        let step = "migration step \(fromVersion) → \(toVersion) failed" + (what.map { " in \($0)" } ?? "")
        do {
            return try body()
        } catch let error as PersistenceError {
            if [.storageFull, .conflict, .connectionLost].contains(error.code)
                || (what == nil && error.code == .migrationFailed)
            {
                throw error
            }
            // The cause stays the typed error (a unique violation on every backend); a failure already wrapped
            // keeps the error it wrapped (a user's closure's own).
            throw PersistenceError(
                .migrationFailed, "\(step): \(error.message)", nativeCode: error.nativeCode,
                nativeMessage: error.nativeMessage,
                underlyingError: error.code == .migrationFailed ? (error.underlyingError ?? error) : error)
        } catch let cancellation as CancellationError where CancellationFlag.current?.isCancelled == true {
            throw cancellation
        } catch {
            throw PersistenceError(.migrationFailed, "\(step): it threw \(type(of: error))", underlyingError: error)
        }
    }
}
