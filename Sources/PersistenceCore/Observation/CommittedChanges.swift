/// What one commit changed, as the observation hub passes it on: per entity name, the primary keys inserted,
/// updated and deleted, and the aliases set or removed.
package struct CommittedChanges: Sendable {
    /// Per entity name.
    package var entities: [String: ChangeSet]
    /// Names of aliases set or removed.
    package var aliases: Set<String>
    /// The commit may have changed anything: another process wrote, or raw SQL touched something unnamed.
    package var everything: Bool

    package init(entities: [String: ChangeSet] = [:], aliases: Set<String> = [], everything: Bool = false) {
        self.entities = entities
        self.aliases = aliases
        self.everything = everything
    }

    /// How many primary keys the change sets list.
    package var keyCount: Int { entities.values.reduce(0) { $0 + $1.keyCount } }

    /// A commit by someone else (another process, another database value on the same file): anything may have
    /// changed.
    package static let external = CommittedChanges(everything: true)
}

/// One entity's net changes in one commit, by primary key value.
package struct ChangeSet: Sendable {
    /// Whether every changed record is listed (see ``EntityChanges/isComplete``).
    package var isComplete = true
    private var order: [Value] = []
    /// Per key: whether the record existed before the commit, and whether it exists after.
    private var states: [Value: (before: Bool, after: Bool)] = [:]

    package init() {}

    /// How many primary keys the change set lists.
    package var keyCount: Int { order.count }

    /// Adds changes, in the order they happened.
    package mutating func merge(_ operations: [(kind: ChangeKind, key: Value)]) {
        for (kind, key) in operations {
            let after = kind != .delete
            if let state = states[key] {
                states[key] = (state.before, after)
            } else {
                order.append(key)
                states[key] = (kind != .insert, after)
            }
        }
    }

    /// Keys of records that didn't exist before the commit and do after, in the order first changed.
    package var inserted: [Value] { keys { !$0.before && $0.after } }
    /// Keys of records that existed before and after the commit and were written.
    package var updated: [Value] { keys { $0.before && $0.after } }
    /// Keys of records that existed before the commit and don't after.
    package var deleted: [Value] { keys { $0.before && !$0.after } }

    private func keys(_ matching: ((before: Bool, after: Bool)) -> Bool) -> [Value] {
        order.filter { states[$0].map(matching) ?? false }
    }
}
