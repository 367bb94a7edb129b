/// How far a migration has come, reported to the progress handler a builder is given while the store opens.
///
/// Reported for each pass over an entity's records — each of the migration code's enumerations, then the pass that
/// writes every changed record in the new schema — when the pass begins, every 1,000 records, and when it ends.
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
        /// Records are written in the new schema, and indexes rebuilt.
        case rewriting
    }

    /// The entity whose records are being migrated.
    public var entity: String
    /// What the pass does.
    public var stage: Stage
    /// Records done in this pass.
    public var completed: Int
    /// Records the pass visits (counted when it begins).
    public var total: Int

    /// Creates a progress report.
    public init(entity: String, stage: Stage, completed: Int, total: Int) {
        self.entity = entity
        self.stage = stage
        self.completed = completed
        self.total = total
    }

    /// `completed / total`, 1 when there is nothing to do.
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    /// `Person: rewriting 1000 of 10000`.
    public var description: String { "\(entity): \(stage.rawValue) \(completed) of \(total)" }
}

/// A migration's progress handler: called on the thread opening the store, between records.
public typealias MigrationProgressHandler = @Sendable (MigrationProgress) -> Void
