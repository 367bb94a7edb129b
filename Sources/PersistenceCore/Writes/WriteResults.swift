/// What one ``DatabaseContext/upsert(_:)-(E)`` did.
public enum UpsertOutcome: Sendable, Hashable {
    /// There was no record with that primary key: the entity was inserted.
    case inserted
    /// The stored record was replaced.
    case updated
    /// The entity declares a stamp (``Entity/stampAttribute``) and the stored record's was as new or newer: the
    /// stored record was kept unchanged.
    case ignoredAsStale
}

/// How many records a batch write or a ``DatabaseContext/reconcile(_:with:where:)`` inserted, updated, left alone or
/// deleted.
public struct ChangeCounts: Sendable, Hashable, CustomStringConvertible {
    /// Records inserted.
    public var inserted = 0
    /// Stored records replaced.
    public var updated = 0
    /// Records that were already stored exactly as given (reconcile only).
    public var unchanged = 0
    /// Records not written because the stored record's stamp was as new or newer.
    public var ignoredAsStale = 0
    /// Stored records deleted (reconcile only).
    public var deleted = 0

    /// No changes counted yet.
    public init() {}

    /// Counts one upsert's outcome.
    public mutating func count(_ outcome: UpsertOutcome) {
        switch outcome {
        case .inserted: inserted += 1
        case .updated: updated += 1
        case .ignoredAsStale: ignoredAsStale += 1
        }
    }

    /// `inserted 3, updated 1, unchanged 10, ignored as stale 0, deleted 2`.
    public var description: String {
        "inserted \(inserted), updated \(updated), unchanged \(unchanged), ignored as stale \(ignoredAsStale), "
            + "deleted \(deleted)"
    }
}

/// What a discardable edit (``Database/edit(_:)-6kxsl``) ends with.
public enum EditDecision: Sendable, Hashable {
    /// Keep the changes: the write commits.
    case commit
    /// Throw the changes away: the write rolls back, as if it never ran, and nothing is thrown.
    case discard
}
