/// How far a migration has come, reported to the progress handler a builder is given while the store opens.
///
/// Reported for each pass over an entity's records — on LMDB each of the migration block's enumerations, then the
/// pass that writes every changed record in the new schema; on SQLite and PostgreSQL each entity's copy, change in
/// place or mapping in each step of the chain — when the pass begins, every 1,000 records, and when it ends.
///
/// ```swift
/// builder.migrationProgress = { progress in
///     print("\(progress.entity): \(progress.completed) of \(progress.total)")
/// }
/// ```
public struct MigrationProgress: Sendable, Hashable, CustomStringConvertible {
    /// What the pass does.
    public enum Stage: String, Sendable, Hashable {
        /// The migration code enumerates the entity's records.
        case enumerating
        /// Records are written in the new schema, and indexes rebuilt (on SQLite and PostgreSQL: an inferred step
        /// copies a table, or changes it in place).
        case rewriting
        /// A mapping model's entity mapping turns each source record into destination records (SQLite, PostgreSQL).
        case mapping
        /// A custom policy fixes references between the records its mapping created (SQLite, PostgreSQL).
        case fixingReferences
    }

    /// The entity whose records are being migrated.
    public var entity: String
    /// What the pass does.
    public var stage: Stage
    /// Records done in this pass.
    public var completed: Int
    /// Records the pass visits (counted when it begins).
    public var total: Int
    /// The step of a chained migration this pass belongs to: its source and destination model versions (on LMDB,
    /// the store's version and the builder's).
    public var step: ClosedRange<Int>?

    /// Creates a progress report.
    public init(entity: String, stage: Stage, completed: Int, total: Int, step: ClosedRange<Int>? = nil) {
        self.entity = entity
        self.stage = stage
        self.completed = completed
        self.total = total
        self.step = step
    }

    /// `completed / total`, 1 when there is nothing to do.
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    /// `Person: rewriting 1000 of 10000`, with the step in front when there is one: `1 → 2 Person: mapping 0 of 10`.
    public var description: String {
        (step.map { "\($0.lowerBound) → \($0.upperBound) " } ?? "")
            + "\(entity): \(stage.rawValue) \(completed) of \(total)"
    }
}

/// A migration's progress handler: called on the thread opening the store, between records.
public typealias MigrationProgressHandler = @Sendable (MigrationProgress) -> Void
