/// A condition on the records a relationship leads to, resolved against the model: the records of the entity at
/// `target` whose attribute at `remote` equals this record's attribute at `local` and that match `condition`
/// number so that `count` holds.
///
/// A to-one links its foreign key (`local`) to the target's primary key (`remote`); a to-many links the primary key
/// (`local`) to the target's foreign key (`remote`). A `nil` local value has no related records.
@_spi(PersistenceBackend) public struct RelatedCondition: Sendable {
    /// The relationship's name.
    package let name: String
    /// The linking attribute's position in this entity's layout.
    package let local: Int
    /// The related entity's position in the model.
    package let target: Int
    /// The related entity's layout.
    package let targetLayout: RecordLayout
    /// The linked attribute's position in the related entity's layout.
    package let remote: Int
    /// Which related records count (resolved against the related entity); `nil` for all.
    package let condition: ResolvedCondition?
    /// How their number must compare.
    package let count: CountComparison
}

/// The answer to a ``RelatedCondition`` computed ahead of a scan: for each value of the linking attribute, how many
/// related records match.
@_spi(PersistenceBackend) public struct RelatedCounts: Sendable {
    /// Matching related records per linked value (values with none are absent).
    package let counts: [Value: Int]
    package let count: CountComparison

    package init(counts: [Value: Int], count: CountComparison) {
        self.counts = counts
        self.count = count
    }

    /// Whether a record whose linking attribute holds `value` satisfies the condition.
    package func holds(for value: Value) -> Bool {
        count.holds(for: value.isNull ? 0 : counts[value] ?? 0)
    }

    /// The linked values that satisfy the condition when those absent don't (`nil` when a value with no related
    /// record satisfies it): what an index can look up.
    package var satisfyingValues: [Value]? {
        guard !count.holds(for: 0) else { return nil }
        return counts.compactMap { count.holds(for: $0.value) ? $0.key : nil }
    }
}

extension Condition {
    /// Resolves a condition on the records of `name`, a relationship of `layout`'s entity, against `graph`.
    static func resolveRelated(
        _ name: String, _ condition: Condition?, _ count: CountComparison, in layout: RecordLayout,
        graph: ModelGraph?
    ) throws -> RelatedCondition {
        let entity = layout.entity
        guard let relationship = entity.relationship(named: name) else {
            throw PersistenceError(.unknownAttribute, "entity '\(entity.name)' declares no relationship '\(name)'")
        }
        guard let graph else {
            throw PersistenceError(
                .invalidArgument, "a condition on the relationship '\(entity.name).\(name)' can't be used here")
        }
        guard let target = graph.position(named: relationship.target) else {
            throw PersistenceError(.unknownEntity, "'\(relationship.target)' is not in the model")
        }
        let targetLayout = graph.layouts[target]
        // The related records are read in the same statement (a subquery), not looked up: tell an observed read.
        ReadTracker.noteEntity(named: targetLayout.entity.name)
        let resolved = try condition?.resolve(in: targetLayout, graph: graph)
        if relationship.kind == .manyToMany {
            return try resolveManyToMany(relationship, of: layout, target: target, resolved, count, graph)
        }
        let local: Int?
        let remote: Int?
        switch relationship.kind {
        case .toOne:
            local = relationship.foreignKey.flatMap(layout.position(of:))
            remote = targetLayout.primaryKeyIndex
        case .toMany, .manyToMany:
            local = layout.primaryKeyIndex
            remote = relationship.inverse.flatMap { targetLayout.entity.relationship(named: $0)?.foreignKey }
                .flatMap(targetLayout.position(of:))
        }
        guard let local, let remote else {
            throw PersistenceError(.invalidSchema, "the relationship '\(entity.name).\(name)' has no foreign key")
        }
        return RelatedCondition(
            name: name, local: local, target: target, targetLayout: targetLayout, remote: remote,
            condition: resolved, count: count)
    }

    /// A many-to-many as two steps: the links whose near key is this record's primary key, counted when their far
    /// key names a related record that matches.
    private static func resolveManyToMany(
        _ relationship: Relationship, of layout: RecordLayout, target: Int, _ condition: ResolvedCondition?,
        _ count: CountComparison, _ graph: ModelGraph
    ) throws -> RelatedCondition {
        let (link, near, far) = try graph.links(of: relationship, of: layout.entity.name)
        ReadTracker.noteEntity(named: graph.layouts[link].entity.name)
        let targetLayout = graph.layouts[target]
        let linked = condition.map { condition in
            ResolvedCondition.related(
                RelatedCondition(
                    name: relationship.name, local: far, target: target, targetLayout: targetLayout,
                    remote: targetLayout.primaryKeyIndex, condition: condition, count: .atLeastOne))
        }
        return RelatedCondition(
            name: relationship.name, local: layout.primaryKeyIndex, target: link, targetLayout: graph.layouts[link],
            remote: near, condition: linked, count: count)
    }
}
