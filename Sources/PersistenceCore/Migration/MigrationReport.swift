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
        /// Records written in the new schema by the migration's last pass.
        public var recordsRewritten: Int

        /// Creates the counts of one entity.
        public init(name: String, recordsBefore: Int, recordsAfter: Int, recordsRewritten: Int) {
            self.name = name
            self.recordsBefore = recordsBefore
            self.recordsAfter = recordsAfter
            self.recordsRewritten = recordsRewritten
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

    /// Creates a report.
    public init(fromVersion: Int, toVersion: Int, changes: [String], entities: [EntityCounts]) {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.changes = changes
        self.entities = entities
    }

    /// `schema version 1 → 2: 'Person.age' added; Person 1000 → 1000 records (1000 rewritten)`.
    public var description: String {
        let counts = entities.map {
            "\($0.name) \($0.recordsBefore) → \($0.recordsAfter) records (\($0.recordsRewritten) rewritten)"
        }
        return "schema version \(fromVersion) → \(toVersion): "
            + (changes.isEmpty ? "no schema change" : changes.joined(separator: "; ")) + "; "
            + counts.joined(separator: ", ")
    }
}
