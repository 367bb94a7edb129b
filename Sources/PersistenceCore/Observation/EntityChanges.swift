/// What one commit changed in the records of one entity type: the primary keys inserted, updated and deleted.
///
/// Changes are net, per commit: a record inserted and then updated in the same write is *inserted*; inserted and
/// then deleted, absent; deleted and then inserted again, *updated*. Keys are listed in the order the write first
/// touched them.
///
/// ```swift
/// for await change in db.changes(of: User.self) {
///     cache.removeValues(forKeys: change.updated + change.deleted)
///     if !change.isComplete { cache.removeAll() }
/// }
/// ```
public struct EntityChanges<E: Entity>: Sendable {
    /// Records that didn't exist before the commit.
    public var inserted: [E.ID]
    /// Records that existed before the commit and were written by it (possibly with the same values).
    public var updated: [E.ID]
    /// Records that the commit deleted.
    public var deleted: [E.ID]
    /// Whether every changed record is listed. `false` when the commit changed records it can't name one by one:
    /// raw SQL, another process's write (noticed as described in ``Database/checkForExternalChanges()``), or a
    /// write that was already open when this observation began. Treat every record of the type as possibly
    /// changed then.
    public var isComplete: Bool

    /// Creates a change set.
    public init(inserted: [E.ID] = [], updated: [E.ID] = [], deleted: [E.ID] = [], isComplete: Bool = true) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.isComplete = isComplete
    }

    /// Whether the change set lists no key (it may still be incomplete).
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The typed change set of an untyped one; a key that doesn't decode as `E.ID` makes it incomplete.
    init(_ changes: ChangeSet?, layout: RecordLayout) {
        guard let changes else {
            self.init(isComplete: false)
            return
        }
        var isComplete = changes.isComplete
        func ids(_ values: [Value]) -> [E.ID] {
            values.compactMap { value in
                guard let id = try? RecordDecoder.primaryKey(E.ID.self, from: value, layout: layout) else {
                    isComplete = false
                    return nil
                }
                return id
            }
        }
        let inserted = ids(changes.inserted)
        let updated = ids(changes.updated)
        let deleted = ids(changes.deleted)
        self.init(inserted: inserted, updated: updated, deleted: deleted, isComplete: isComplete)
    }
}
