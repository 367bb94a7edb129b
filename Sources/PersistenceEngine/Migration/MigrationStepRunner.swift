@_spi(PersistenceBackend) package import PersistenceCore

/// Runs one planned step of a mapping-model migration on a backend's ``MigrationStepBackend``, inside the
/// transaction that opens the store.
///
/// Stage 1 fills every new table: inferred copies first (one statement when no value needs checking, else record
/// by record), then the mapping model's entity mappings in their order. Stage 2: custom policies fix references
/// between the records they created, then finish. Stage 3: the backend replaces the tables and builds indexes.
/// Records are streamed, so memory doesn't grow with a table; each mapping closure runs once per source record.
package final class MigrationStepRunner: MappingStore {
    let backend: any MigrationStepBackend
    let plan: MigrationStepPlan
    let progress: MigrationProgressHandler?
    private let sourceLayouts: [String: RecordLayout]
    private let destinationLayouts: [String: RecordLayout]
    /// The custom mapping whose first stage is running, when its policy fixes references afterwards.
    private var trackedMapping: Int?
    /// Records written into each destination entity's table.
    private var rewritten: [String: Int] = [:]
    /// The mapping code's context; closed when the step ends.
    private(set) lazy var context = MappingContext(
        store: self, sourceVersion: plan.fromVersion, destinationVersion: plan.toVersion)

    /// How a migration block's run fills the destinations the plan says it fills (``MigrationStepPlan`` `filledByBlock`):
    /// by entity, a closure that inserts each record's values through the one it is given.
    package typealias Fill = (_ insert: ([Value]) throws -> Void) throws -> Void
    private let fills: [String: Fill]

    package init(
        backend: any MigrationStepBackend, plan: MigrationStepPlan, progress: MigrationProgressHandler?,
        fills: [String: Fill] = [:]
    ) {
        self.backend = backend
        self.plan = plan
        self.progress = progress
        self.fills = fills
        sourceLayouts = Dictionary(
            plan.source.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
        destinationLayouts = Dictionary(
            plan.destinations.map { ($0.name, $0.layout) }, uniquingKeysWith: { first, _ in first })
    }

    private var stepRange: ClosedRange<Int> { plan.fromVersion...plan.toVersion }

    /// Runs the step; returns what it did.
    package func run() throws -> MigrationReport.Step {
        defer { context.close() }
        var before: [String: Int] = [:]
        for layout in plan.source { before[layout.entity.name] = try backend.count(layout, source: true) }
        // Tables the backend can change in place keep their rows where they are.
        var altered: Set<String> = []
        if plan.mappings.isEmpty {
            for destination in plan.destinations {
                guard let source = destination.inferredSource else { continue }
                guard
                    let changed = try plan.failing(
                        "changing the table of '\(source.entity.name)' to '\(destination.name)' in place",
                        { try backend.alterInPlace(destination) })
                else { continue }
                altered.insert(destination.name)
                rewritten[destination.name, default: 0] += changed
                let total = before[source.entity.name] ?? 0
                report(destination.name, .rewriting, 0, total)
                report(destination.name, .rewriting, total, total)
            }
        }
        for destination in plan.destinations where destination.keptSource == nil && !altered.contains(destination.name)
        {
            try backend.createTable(destination.layout)
        }
        // Stage 1: every new table filled, inferred copies first, then the mappings in their order.
        for destination in plan.destinations where !altered.contains(destination.name) {
            guard let source = destination.inferredSource, let mapping = destination.inferredMapping else { continue }
            try plan.failing("the inferred copy of '\(source.entity.name)' to '\(destination.name)'") {
                try copy(source, to: destination.layout, mapping: mapping, total: before[source.entity.name] ?? 0)
            }
        }
        for destination in plan.destinations {
            guard let fill = fills[destination.name] else { continue }
            try plan.failing("writing the records of '\(destination.name)'") {
                try fill { values in try insertChecked(values, into: destination.layout, deferred: true) }
            }
        }
        let tracksCreated = plan.mappings.contains { $0.policy?.fixReferences != nil }
        if tracksCreated { try backend.startTracking() }
        for (index, mapping) in plan.mappings.enumerated() {
            try plan.failing(describe(mapping)) { try createDestinationRecords(mapping, index: index) }
        }
        // Stage 2.
        for (index, mapping) in plan.mappings.enumerated() {
            guard let fix = mapping.policy?.fixReferences else { continue }
            try plan.failing("fixing references of " + describe(mapping)) { try fixReferences(index, mapping, fix) }
        }
        for mapping in plan.mappings {
            guard let finish = mapping.policy?.finish else { continue }
            try plan.failing("finishing " + describe(mapping)) { try finish(context) }
        }
        if tracksCreated { try backend.endTracking() }
        // Stage 3.
        try plan.failing("replacing the tables and building indexes") { try backend.replaceTables() }
        // Aliases follow an entity a declared rename moved (an inferred copy from a source of another name).
        for destination in plan.destinations {
            guard let source = destination.inferredSource?.entity.name, source != destination.name else { continue }
            try plan.failing("renaming the aliases of '\(source)' to '\(destination.name)'") {
                try backend.renameAliasTargets(from: source, to: destination.name)
            }
        }

        var entities: [MigrationReport.EntityCounts] = []
        for layout in plan.source {
            let name = layout.entity.name
            let after = try destinationLayouts[name].map { try backend.count($0, source: false) } ?? 0
            entities.append(
                MigrationReport.EntityCounts(
                    name: name, recordsBefore: before[name] ?? 0, recordsAfter: after,
                    recordsRewritten: rewritten[name] ?? 0))
        }
        for destination in plan.destinations where before[destination.name] == nil {
            entities.append(
                MigrationReport.EntityCounts(
                    name: destination.name, recordsBefore: 0,
                    recordsAfter: try backend.count(destination.layout, source: false),
                    recordsRewritten: rewritten[destination.name] ?? 0))
        }
        return MigrationReport.Step(
            fromVersion: plan.fromVersion, toVersion: plan.toVersion, kind: plan.kind, changes: plan.changes,
            entities: entities)
    }

    private func describe(_ mapping: EntityMapping) -> String {
        "the \(mapping.kind.rawValue) mapping of '\(mapping.sourceEntity ?? "—")' to '\(mapping.destinationEntity ?? "—")'"
    }

    private func report(_ entity: String, _ stage: MigrationProgress.Stage, _ completed: Int, _ total: Int) {
        progress?(MigrationProgress(entity: entity, stage: stage, completed: completed, total: total, step: stepRange))
    }

    // MARK: - Stage 1

    /// An inferred copy: one statement when every value keeps its type, else record by record with checks.
    private func copy(_ source: RecordLayout, to destination: RecordLayout, mapping: RecordMapping, total: Int) throws {
        let name = destination.entity.name
        let retyped = zip(mapping.sources, destination.types).contains { position, type in
            position.map { source.types[$0] != type } ?? false
        }
        guard !retyped else {
            try stream(source, entity: name, stage: .rewriting) { record in
                var values = mapping.map(record.values)
                for (position, attribute) in destination.entity.attributes.enumerated() {
                    values[position] = try attribute.storedMigrationValue(values[position], in: name)
                }
                try insertChecked(values, into: destination, deferred: true)
            }
            return
        }
        report(name, .rewriting, 0, total)
        let fallbacks = mapping.map(Array(repeating: .null, count: source.names.count))
        let copied = try backend.copyTable(
            from: source, to: destination, columns: Array(zip(mapping.sources, fallbacks)))
        rewritten[name, default: 0] += copied
        report(name, .rewriting, total, total)
    }

    /// Calls `body` with each record of a source entity, reporting progress every 1,000.
    private func stream(
        _ source: RecordLayout, entity: String, stage: MigrationProgress.Stage, _ body: (Record) throws -> Void
    ) throws {
        let total = try backend.count(source, source: true)
        report(entity, stage, 0, total)
        var completed = 0
        try backend.forEachSourceRecord(source) { record in
            // A cancelled async open() stops between records; the migration's transaction rolls back.
            try CancellationFlag.checkCurrent()
            try body(record)
            completed += 1
            if completed % 1000 == 0 { report(entity, stage, completed, total) }
        }
        if completed % 1000 != 0 || completed == 0 { report(entity, stage, completed, total) }
    }

    private func createDestinationRecords(_ mapping: EntityMapping, index: Int) throws {
        guard let sourceName = mapping.sourceEntity, let source = sourceLayouts[sourceName] else { return }
        let progressName = mapping.destinationEntity ?? sourceName
        switch mapping.kind {
        case .add, .remove:
            return
        case .custom:
            if let create = mapping.policy?.createDestinationRecords {
                trackedMapping = mapping.policy?.fixReferences == nil ? nil : index
                defer { trackedMapping = nil }
                try stream(source, entity: progressName, stage: .mapping) { record in
                    try create(MappingSource(record: record, context: context), context)
                }
                return
            }
            trackedMapping = mapping.policy?.fixReferences == nil ? nil : index
        case .copy, .transform:
            break
        }
        defer { trackedMapping = nil }
        guard let destinationName = mapping.destinationEntity, let destination = destinationLayouts[destinationName]
        else { return }
        let inferred = RecordMapping(
            from: source, to: destination, renamed: MigrationRules.renames(of: destination, from: source))
        let closures: [AttributeMapping?] = destination.names.map { mapping.attributeMappings[$0] }
        let attributes = destination.entity.attributes
        // A value copied from a source attribute of the same type and optionality was checked when it was stored;
        // a closure's value, a default or a value of another type is checked here.
        let checked = attributes.indices.map { position in
            guard closures[position] == nil, let origin = inferred.sources[position] else { return true }
            let from = source.entity.attributes[origin]
            return from.type != attributes[position].type || from.isOptional != attributes[position].isOptional
        }
        var inserted = 0
        defer { rewritten[destinationName, default: 0] += inserted }
        try stream(source, entity: progressName, stage: .mapping) { record in
            var values = inferred.map(record.values)
            let mappingSource = MappingSource(record: record, context: context)
            for position in values.indices where checked[position] {
                if let closure = closures[position] { values[position] = try closure.value(for: mappingSource) }
                values[position] = try attributes[position].storedMigrationValue(values[position], in: destinationName)
            }
            try backend.insert(values, into: destination, deferred: true)
            inserted += 1
            try track(destinationName, key: values[destination.primaryKeyIndex])
        }
    }

    /// Inserts values already checked against the destination's attributes.
    private func insertChecked(_ values: [Value], into layout: RecordLayout, deferred: Bool) throws {
        try backend.insert(values, into: layout, deferred: deferred)
        rewritten[layout.entity.name, default: 0] += 1
    }

    /// Records that the custom mapping under way created a record, for its stage 2.
    private func track(_ entity: String, key: Value) throws {
        guard let trackedMapping else { return }
        try backend.track(mapping: trackedMapping, entity: entity, key: key)
    }

    // MARK: - Stage 2

    private func fixReferences(
        _ index: Int, _ mapping: EntityMapping, _ fix: (inout Record, MappingContext) throws -> Void
    ) throws {
        let progressName = mapping.destinationEntity ?? mapping.sourceEntity ?? ""
        let total = try backend.trackedCount(mapping: index)
        report(progressName, .fixingReferences, 0, total)
        var completed = 0
        try backend.forEachTracked(mapping: index) { entity, key in
            guard let layout = destinationLayouts[entity],
                var record = try backend.record(layout, source: false, key: key)
            else { return }
            try fix(&record, context)
            guard record.primaryKey == key else {
                throw PersistenceError(
                    .invalidArgument, "fixReferences changed the primary key of a '\(entity)' record; it can't")
            }
            try context.update(record)
            completed += 1
            if completed % 1000 == 0 { report(progressName, .fixingReferences, completed, total) }
        }
        if completed % 1000 != 0 || completed == 0 { report(progressName, .fixingReferences, completed, total) }
    }

    // MARK: - MappingStore

    package func sourceLayout(_ entity: String) -> RecordLayout? { sourceLayouts[entity] }

    package func destinationLayout(_ entity: String) -> RecordLayout? { destinationLayouts[entity] }

    package func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record? {
        try backend.record(layout, source: source, key: key)
    }

    package func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record] {
        try backend.records(layout, source: source, where: condition)
    }

    package func insert(_ record: Record) throws {
        try insertChecked(record.values, into: record.layout, deferred: false)
        try track(record.entityName, key: record.primaryKey)
    }

    package func update(_ record: Record) throws -> Bool { try backend.update(record) }

    package func delete(_ layout: RecordLayout, key: Value) throws -> Bool { try backend.delete(layout, key: key) }
}
