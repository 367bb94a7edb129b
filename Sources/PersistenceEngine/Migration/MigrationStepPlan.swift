package import PersistenceCore

/// What one step of a mapping-model migration does to each entity, decided from the schemas and the step's mapping
/// model **before any change** — a step that can't be done is refused here, naming the step, entity and attribute.
///
/// A backend runs it in three parts: every destination entity whose table changes gets a new one, filled by its
/// entity mappings or by an inferred copy; custom policies fix references and finish; then the source tables not
/// kept are dropped, the new ones take their names, and indexes are built.
package struct MigrationStepPlan {
    /// One destination entity.
    package struct Destination {
        package let layout: RecordLayout
        /// The source entity whose table this entity keeps as it is (same name, same attributes): only indexes may
        /// change. `nil` when the entity gets a new table.
        package let keptSource: RecordLayout?
        /// The source entity an inferred copy fills the new table from (`nil` when mappings fill it or it starts
        /// empty).
        package let inferredSource: RecordLayout?
        /// How an inferred copy maps the source's attributes (with declared renames).
        package let inferredMapping: RecordMapping?
        /// Whether explicit entity mappings name this entity as their destination.
        package let isMapped: Bool

        package var name: String { layout.entity.name }
    }

    package let fromVersion: Int
    package let toVersion: Int
    package let kind: MigrationReport.Step.Kind
    package let source: [RecordLayout]
    package let destinations: [Destination]
    /// The step's explicit entity mappings, in the mapping model's order.
    package let mappings: [EntityMapping]
    /// Source entities whose tables are dropped at the end of the step (every source table not kept).
    package let droppedSources: [RecordLayout]
    /// The schema changes, one clause each.
    package let changes: [String]

    /// Whether the step changes nothing in the store but the stored schema and version.
    package var changesNothing: Bool {
        droppedSources.isEmpty
            && destinations.allSatisfy { destination in
                guard let kept = destination.keptSource?.entity else { return false }
                return Set(kept.indexes) == Set(destination.layout.entity.indexes)
                    && Set(kept.fullTextIndexes) == Set(destination.layout.entity.fullTextIndexes)
            }
    }

    /// Plans a step. A backend whose records hold their values by position (LMDB) asks for `positionalRecords`:
    /// an entity keeps its table only when its attributes are also in the same order.
    ///
    /// After a migration block (``BlockMigrationRun``), `filledByBlock` names the destination entities whose records
    /// the block's run writes itself: they get new tables, which the runner's `fills` fill. The step is then
    /// `mapped`, and what inference can't do is no blocker — the block may have done it; a record whose value still
    /// doesn't fit fails the copy.
    /// - Throws: ``PersistenceError/Code/migrationRequired`` naming the step, entity and attribute that block
    ///   inference where no mapping is given; ``PersistenceError/Code/unknownEntity`` or
    ///   ``PersistenceError/Code/unknownAttribute`` for a mapping model naming what the step's schemas don't have.
    package init(
        fromVersion: Int, toVersion: Int, source: [RecordLayout], destination: [RecordLayout], mapping: MappingModel?,
        positionalRecords: Bool = false, filledByBlock: Set<String>? = nil
    ) throws {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.source = source
        let step = "migration step \(fromVersion) → \(toVersion)"
        let sources = Dictionary(source.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
        let destinationNames = Set(destination.map(\.entity.name))
        let mappings = mapping?.entityMappings ?? []
        kind = mapping == nil && filledByBlock == nil ? .inferred : .mapped
        self.mappings = mappings

        // Check the mapping model against the step's schemas.
        for entityMapping in mappings {
            if let name = entityMapping.sourceEntity, sources[name] == nil {
                throw PersistenceError(
                    .unknownEntity,
                    "\(step): a \(entityMapping.kind.rawValue) mapping names source entity '\(name)', which version "
                        + "\(fromVersion) doesn't have")
            }
            guard let name = entityMapping.destinationEntity else { continue }
            guard let layout = destination.first(where: { $0.entity.name == name }) else {
                throw PersistenceError(
                    .unknownEntity,
                    "\(step): a \(entityMapping.kind.rawValue) mapping names destination entity '\(name)', which "
                        + "version \(toVersion) doesn't have")
            }
            for attribute in entityMapping.attributeMappings.keys.sorted() where layout.position(of: attribute) == nil {
                throw PersistenceError(
                    .unknownAttribute, "\(step): a mapping of '\(name)' maps attribute '\(attribute)', which it hasn't")
            }
            if let sourceName = entityMapping.sourceEntity, let sourceLayout = sources[sourceName],
                [.copy, .transform].contains(entityMapping.kind)
                    || (entityMapping.kind == .custom && entityMapping.policy?.createDestinationRecords == nil)
            {
                let mapping = RecordMapping(
                    from: sourceLayout, to: layout, renamed: MigrationRules.renames(of: layout, from: sourceLayout))
                if let blocker = MigrationRules.blocker(
                    mapping, mapped: Set(entityMapping.attributeMappings.keys), requiresSameTypes: false)
                {
                    throw PersistenceError(
                        .migrationRequired,
                        "\(step): the \(entityMapping.kind.rawValue) mapping of '\(sourceName)' to '\(name)' can't fill "
                            + blocker + "; map the attribute with a closure")
                }
            }
        }

        let removed = Set(mappings.filter { $0.kind == .remove }.compactMap(\.sourceEntity))
        let mappedDestinations = Set(mappings.compactMap(\.destinationEntity))
        var destinations: [Destination] = []
        var blockers: [String] = []
        var renamedSources: [String: EntityDescription] = [:]
        var renameClauses: [String] = []
        for layout in destination {
            let name = layout.entity.name
            guard !mappedDestinations.contains(name) else {
                destinations.append(
                    Destination(
                        layout: layout, keptSource: nil, inferredSource: nil, inferredMapping: nil, isMapped: true))
                continue
            }
            let inferred = MigrationRules.continuedSource(of: layout, in: sources, destinationNames: destinationNames)
            guard let sourceLayout = inferred, !removed.contains(sourceLayout.entity.name) else {
                destinations.append(
                    Destination(
                        layout: layout, keptSource: nil, inferredSource: nil, inferredMapping: nil,
                        isMapped: filledByBlock?.contains(name) == true))
                continue
            }
            let renames = MigrationRules.renames(of: layout, from: sourceLayout)
            let mapping = RecordMapping(from: sourceLayout, to: layout, renamed: renames)
            renameClauses += MigrationRules.renameClauses(of: layout, from: sourceLayout, renames)
            renamedSources[sourceLayout.entity.name] = MigrationRules.renamed(sourceLayout.entity, to: name, renames)
            if filledByBlock?.contains(name) == true {
                destinations.append(
                    Destination(
                        layout: layout, keptSource: nil, inferredSource: nil, inferredMapping: nil, isMapped: true))
                continue
            }
            if filledByBlock == nil, let blocker = MigrationRules.blocker(mapping, mapped: [], requiresSameTypes: true)
            {
                blockers.append(blocker)
            }
            let keeps =
                sourceLayout.entity.name == name && renames.isEmpty
                && Self.sameTable(sourceLayout.entity, layout.entity)
                && (!positionalRecords || sourceLayout.names == layout.names)
            destinations.append(
                Destination(
                    layout: layout, keptSource: keeps ? sourceLayout : nil, inferredSource: keeps ? nil : sourceLayout,
                    inferredMapping: keeps ? nil : mapping, isMapped: false))
        }
        guard blockers.isEmpty else {
            throw PersistenceError(
                .migrationRequired,
                "\(step) can't be inferred: " + blockers.joined(separator: "; ")
                    + "; give a MappingModel(from: \(fromVersion), to: \(toVersion), …) for it")
        }
        self.destinations = destinations
        let kept = Set(destinations.compactMap { $0.keptSource?.entity.name })
        droppedSources = source.filter { !kept.contains($0.entity.name) }

        changes =
            renameClauses
            + SchemaDifference(
                stored: source.map { renamedSources[$0.entity.name] ?? $0.entity },
                current: destination.map(\.entity)
            ).clauses
    }

    /// Whether two descriptions of one entity have the same columns: indexes (full-text ones too) aside.
    private static func sameTable(_ a: EntityDescription, _ b: EntityDescription) -> Bool {
        var a = a.normalized
        var b = b.normalized
        a.indexes = []
        b.indexes = []
        a.fullTextIndexes = []
        b.fullTextIndexes = []
        return a == b
    }

}
