/// What a migration did — or, from a dry run, would do: the versions, the schema changes and each entity's records.
///
/// By names and counts only, never values, so it can go to logs.
public struct MigrationReport: Sendable, Hashable, CustomStringConvertible {
    /// One entity's records through the migration.
    public struct EntityCounts: Sendable, Hashable {
        /// The entity's name.
        public var name: String
        /// Records before the migration (0 for an added entity).
        public var recordsBefore: Int
        /// Records after it (0 for a removed entity).
        public var recordsAfter: Int
        /// Records written in the new schema by the migration's last pass. A table changed in place (PostgreSQL's
        /// `ALTER TABLE` in an inferred step) counts only the rows it wrote — those whose `nil` took a default.
        public var recordsRewritten: Int

        /// Creates the counts of one entity.
        public init(name: String, recordsBefore: Int, recordsAfter: Int, recordsRewritten: Int) {
            self.name = name
            self.recordsBefore = recordsBefore
            self.recordsAfter = recordsAfter
            self.recordsRewritten = recordsRewritten
        }
    }

    /// One step of a migration: a step of the chain on SQLite and PostgreSQL, or LMDB's one step from the stored
    /// version to the model's. How it was done and what it did to each entity.
    public struct Step: Sendable, Hashable, CustomStringConvertible {
        /// How a step was done.
        public enum Kind: String, Sendable, Hashable {
            /// Inferred from the schema difference (lightweight): no mapping model was given for the step (on LMDB,
            /// no migration block ran).
            case inferred
            /// A mapping model was given for the step (its entity mappings win; other entities are inferred); on
            /// LMDB, the migration block ran.
            case mapped
        }

        /// The step's source model version.
        public var fromVersion: Int
        /// The step's destination model version.
        public var toVersion: Int
        /// Inferred or mapped.
        public var kind: Kind
        /// The schema changes of the step, one clause each.
        public var changes: [String]
        /// Every entity of the step's source or destination, with its records before and after the step.
        public var entities: [EntityCounts]

        /// Creates the report of one step.
        public init(fromVersion: Int, toVersion: Int, kind: Kind, changes: [String], entities: [EntityCounts]) {
            self.fromVersion = fromVersion
            self.toVersion = toVersion
            self.kind = kind
            self.changes = changes
            self.entities = entities
        }

        /// `1 → 2 (mapped): 'Person.age' added; Person 10 → 10 records (10 rewritten)`.
        public var description: String {
            "\(fromVersion) → \(toVersion) (\(kind.rawValue)): " + MigrationReport.summary(changes, entities)
        }
    }

    /// The store's schema version before the migration.
    public var fromVersion: Int
    /// The schema version it migrates to.
    public var toVersion: Int
    /// The schema changes, one clause each (`'Person.age' changed type from string to integer`).
    public var changes: [String]
    /// Every entity of either schema, in the stored schema's order, then the added ones.
    public var entities: [EntityCounts]
    /// The steps, in order: on SQLite and PostgreSQL one per step of the chain; on LMDB, which migrates in one step,
    /// exactly one.
    public var steps: [Step]

    /// Creates a report.
    public init(fromVersion: Int, toVersion: Int, changes: [String], entities: [EntityCounts], steps: [Step] = []) {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.changes = changes
        self.entities = entities
        self.steps = steps
    }

    /// `schema version 1 → 2: 'Person.age' added; Person 1000 → 1000 records (1000 rewritten)`.
    public var description: String {
        "schema version \(fromVersion) → \(toVersion): " + Self.summary(changes, entities)
    }

    /// `'Person.age' added; Person 1000 → 1000 records (1000 rewritten)`.
    fileprivate static func summary(_ changes: [String], _ entities: [EntityCounts]) -> String {
        let counts = entities.map {
            "\($0.name) \($0.recordsBefore) → \($0.recordsAfter) records (\($0.recordsRewritten) rewritten)"
        }
        return (changes.isEmpty ? "no schema change" : changes.joined(separator: "; ")) + "; "
            + counts.joined(separator: ", ")
    }
}
