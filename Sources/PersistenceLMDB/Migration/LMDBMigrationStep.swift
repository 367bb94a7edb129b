internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// A migration plan's chain on LMDB: the steps' shared state — the database names as the steps so far left them, and
/// the entity renames to carry over to aliases at the end.
///
/// The chain writes as a migration block does (``MigrationWriter``): only into the migration's own databases, in
/// steps that commit as they go, while the store keeps reading the databases the stored names map — which the chain
/// only reads. Each step's new tables are databases of its own (`entity:Person#2@<token>`); the next step reads
/// them as its source, and a database of the migration no step refers to any more is dropped at once, so disk use
/// doesn't grow with the chain's length. The caller switches the store to ``names`` in one last small write.
final class LMDBMigrationSteps {
    let writer: MigrationWriter
    /// The database names as the steps run so far left them: the stored map at first.
    private(set) var names: DatabaseNames
    /// Stored entity names, by the name the steps so far gave their records.
    private(set) var renamedEntities: [String: String] = [:]
    private var stepCount = 0

    init(writer: MigrationWriter, names: DatabaseNames) {
        self.writer = writer
        self.names = names
    }

    /// The storage of the chain's next step.
    func step(_ plan: MigrationStepPlan) throws -> LMDBMigrationStep {
        stepCount += 1
        return try LMDBMigrationStep(steps: self, plan: plan, tag: String(stepCount))
    }

    /// What a step ended with: the names of the databases its destination entities are in, and the migration's own
    /// databases that no name refers to any more, dropped.
    func stepEnded(names: DatabaseNames, schema: [EntityDescription]) throws {
        self.names = names
        let used = names.physicalNames(of: schema)
        for name in try writer.transaction.databaseNames()
        where writer.owns(name) && DatabaseNames.isEntityOrIndex(name) && !used.contains(name) {
            try writer.prepareWrite(0)
            try writer.environment.dropDatabase(named: name, in: writer.transaction)
        }
    }

    /// A step moved the records of entity `old` to entity `new`, keeping their keys.
    func noteRename(from old: String, to new: String) {
        var carried = false
        for (stored, latest) in renamedEntities where latest == old {
            renamedEntities[stored] = new
            carried = true
        }
        if !carried { renamedEntities[old] = new }
    }
}

/// The storage of one step of a mapping-model migration on LMDB, for the engine's `MigrationStepRunner`.
///
/// Source entities are read where the chain's names say they are (the stored databases at the first step). A
/// destination entity whose records change gets a new records database of the step's own; one kept as it is reads
/// its source's database, and is copied into one of the step's own before mapping code first changes it — a stored
/// database is never written. Indexes are built at the end of the step (``replaceTables()``), into databases of the
/// step's own, except those a kept entity keeps unchanged.
final class LMDBMigrationStep: MigrationStepBackend {
    private let steps: LMDBMigrationSteps
    private let plan: MigrationStepPlan
    /// What tells this step's databases from other steps' (`#<tag>@<token>`).
    private let tag: String
    private var writer: MigrationWriter { steps.writer }
    private var transaction: Transaction { writer.transaction }
    private var sources: [String: EntityStore] = [:]
    /// Each destination entity's records: its new database, or its kept source's.
    private var destinations: [String: EntityStore] = [:]
    /// Destination entities that keep their source's records database (looked up at every write).
    private let keptDestinations: Set<String>
    /// Kept destinations copied into a database of the step's own, because mapping code changed them.
    private var copied: Set<String> = []
    /// The records custom mappings created, for their `fixReferences`: `mapping · sequence` → entity and key.
    private var tracking: MDB_dbi?
    private var trackedCounts: [Int: Int] = [:]
    private var trackedSequence: UInt64 = 0
    /// The indexes of mapped destination entities whose entries the step's filling provably leaves as they are in
    /// the source entity of the same name: by entity (``unchangedIndexes(_:)``).
    private let unchangedIndexes: [String: Set<Index>]
    /// Destination entities mapping code wrote to besides the filling the plan describes (`context.insert`,
    /// `update`, `delete`): their indexes are all built anew.
    private var changedByMappingCode: Set<String> = []
    /// The layout the last insert was into and the database it went to (until ``destinations`` changes).
    private var lastInsert: (layout: RecordLayout, store: EntityStore)?

    fileprivate init(steps: LMDBMigrationSteps, plan: MigrationStepPlan, tag: String) throws {
        self.steps = steps
        self.plan = plan
        self.tag = tag
        keptDestinations = Set(plan.destinations.filter { $0.keptSource != nil }.map(\.name))
        unchangedIndexes = Self.unchangedIndexes(plan)
        let names = steps.names
        for layout in plan.source {
            sources[layout.entity.name] = try EntityStore(
                layout: layout, names: names.physical, environment: steps.writer.environment,
                transaction: steps.writer.transaction)
        }
        for destination in plan.destinations {
            if let kept = destination.keptSource { destinations[destination.name] = sources[kept.entity.name] }
        }
    }

    private func ownName(_ logical: String) -> String { writer.ownName(logical, tag: tag) }

    private func store(_ entity: String, source: Bool) throws -> EntityStore {
        guard let store = source ? sources[entity] : destinations[entity] else {
            throw PersistenceError(
                .unknownEntity, "the migration step has no \(source ? "source" : "destination") entity '\(entity)'")
        }
        return store
    }

    private func recordKey(_ value: Value, of entity: String) throws -> Data {
        try KeyCodec.recordKey(value, of: entity, maximumSize: writer.environment.maximumKeySize)
    }

    private func values(_ stored: Data, key: Data, in store: EntityStore, layout: RecordLayout) throws -> Record {
        let values = try stored.withUnsafeBytes { stored in
            try key.withUnsafeBytes { key in try writer.sealer.open(stored, entity: store, key: key) }
        }
        guard values.count == layout.names.count else {
            throw PersistenceError(.corrupt, "a stored '\(layout.entity.name)' record has the wrong shape")
        }
        return try Record(layout: layout, values: values)
    }

    func count(_ layout: RecordLayout, source: Bool) throws -> Int {
        try transaction.count(store(layout.entity.name, source: source).dbi)
    }

    func createTable(_ destination: RecordLayout) throws {
        lastInsert = nil
        destinations[destination.entity.name] = try EntityStore(
            layout: destination, names: ownName, environment: writer.environment, transaction: transaction)
    }

    func copyTable(from source: RecordLayout, to destination: RecordLayout, columns: [(source: Int?, fallback: Value)])
        throws -> Int
    {
        let origin = try store(source.entity.name, source: true)
        let target = try writableStore(destination.entity.name)
        var copied = 0
        try writer.scan(origin.dbi) { key, stored in
            let record = try values(stored, key: key, in: origin, layout: source)
            let values = columns.map { column in
                guard let position = column.source, !record.values[position].isNull else { return column.fallback }
                return record.values[position]
            }
            try insert(values, into: destination, key: key, in: target)
            copied += 1
            return true
        }
        return copied
    }

    func forEachSourceRecord(_ layout: RecordLayout, _ body: (Record) throws -> Void) throws {
        let origin = try store(layout.entity.name, source: true)
        try writer.scan(origin.dbi) { key, stored in
            try body(try values(stored, key: key, in: origin, layout: layout))
            return true
        }
    }

    func insert(_ values: [Value], into layout: RecordLayout, deferred: Bool) throws {
        let name = layout.entity.name
        // The plan's filling inserts deferred; an insert of mapping code (`context.insert`) doesn't.
        if !deferred { changedByMappingCode.insert(name) }
        // The filling inserts into one entity record after record: its database is looked up once.
        let store: EntityStore
        if let last = lastInsert, last.layout === layout {
            store = last.store
        } else {
            store = try writableStore(name)
            lastInsert = (layout, store)
        }
        try insert(values, into: layout, key: recordKey(values[layout.primaryKeyIndex], of: name), in: store)
    }

    private func insert(_ values: [Value], into layout: RecordLayout, key: Data, in store: EntityStore) throws {
        guard try writer.put(values, key: key, in: store, flags: MDB_NOOVERWRITE) else {
            throw PersistenceError(.duplicateKey, "a '\(layout.entity.name)' record has that primary key")
        }
    }

    /// The records database mapping code may change for a destination entity: a kept entity's is first copied
    /// into one of the step's own (the stored records as they are: same entity, same keys, still sealed).
    private func writableStore(_ entity: String) throws -> EntityStore {
        let current = try store(entity, source: false)
        guard keptDestinations.contains(entity), !copied.contains(entity),
            let destination = plan.destinations.first(where: { $0.name == entity })
        else { return current }
        let own = try EntityStore(
            layout: destination.layout, names: ownName, environment: writer.environment, transaction: transaction)
        try writer.scan(current.dbi) { key, stored in
            try writer.prepareWrite(key.count + stored.count)
            try transaction.put(own.dbi, key, stored)
            return true
        }
        destinations[entity] = own
        copied.insert(entity)
        lastInsert = nil
        return own
    }

    // MARK: - Lookups and changes of mapping code

    func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record? {
        let store = try store(layout.entity.name, source: source)
        let key = try recordKey(key, of: layout.entity.name)
        return try transaction.get(store.dbi, key).map { try values($0, key: key, in: store, layout: layout) }
    }

    func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record] {
        let store = try store(layout.entity.name, source: source)
        var records: [Record] = []
        try writer.scan(store.dbi) { key, stored in
            let record = try values(stored, key: key, in: store, layout: layout)
            if condition?.matches(record.values) ?? true { records.append(record) }
            return true
        }
        return records
    }

    func update(_ record: Record) throws -> Bool {
        let name = record.entityName
        changedByMappingCode.insert(name)
        let key = try recordKey(record.primaryKey, of: name)
        guard try transaction.get(try store(name, source: false).dbi, key) != nil else { return false }
        _ = try writer.put(record.values, key: key, in: writableStore(name))
        return true
    }

    func delete(_ layout: RecordLayout, key: Value) throws -> Bool {
        let name = layout.entity.name
        changedByMappingCode.insert(name)
        let key = try recordKey(key, of: name)
        guard try transaction.get(try store(name, source: false).dbi, key) != nil else { return false }
        let store = try writableStore(name)
        try writer.prepareWrite(key.count)
        return try transaction.delete(store.dbi, key)
    }

    // MARK: - Records created by custom mappings

    func startTracking() throws {
        tracking = try writer.environment.database(named: ownName("tracking"), flags: 0, in: transaction)
    }

    /// A tracked record's key in the tracking database: the mapping, then the order of creation (big-endian, so
    /// the records of one mapping are together, in order).
    private static func trackingKey(mapping: Int, sequence: UInt64) -> Data {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: mapping).bigEndian) { Data($0) }
            + withUnsafeBytes(of: sequence.bigEndian) { Data($0) }
    }

    func track(mapping: Int, entity: String, key: Value) throws {
        guard let tracking else { return }
        trackedSequence += 1
        let name = Data(entity.utf8)
        let value =
            withUnsafeBytes(of: UInt16(name.count).bigEndian) { Data($0) } + name + (try recordKey(key, of: entity))
        let key = Self.trackingKey(mapping: mapping, sequence: trackedSequence)
        try writer.prepareWrite(key.count + value.count)
        try transaction.put(tracking, key, value)
        trackedCounts[mapping, default: 0] += 1
    }

    func trackedCount(mapping: Int) throws -> Int { trackedCounts[mapping] ?? 0 }

    func forEachTracked(mapping: Int, _ body: (String, Value) throws -> Void) throws {
        guard let tracking else { return }
        let prefix = Self.trackingKey(mapping: mapping, sequence: 0).prefix(4)
        var after = Self.trackingKey(mapping: mapping, sequence: 0)
        while true {
            try writer.write.checkUsable()
            guard let (key, value) = try transaction.record(tracking, after: after), key.starts(with: prefix) else {
                return
            }
            after = key
            guard value.count >= 2 else { throw PersistenceError(.corrupt, "a tracked record is damaged") }
            let length = Int(value[value.startIndex]) << 8 | Int(value[value.startIndex + 1])
            let nameEnd = value.startIndex + 2 + length
            guard value.endIndex >= nameEnd else { throw PersistenceError(.corrupt, "a tracked record is damaged") }
            let entity = String(decoding: value[(value.startIndex + 2)..<nameEnd], as: UTF8.self)
            guard let layout = plan.destinations.first(where: { $0.name == entity })?.layout else { continue }
            try body(entity, try KeyCodec.decode(Data(value[nameEnd...]), as: layout.types[layout.primaryKeyIndex]))
        }
    }

    func endTracking() throws {
        tracking = nil
        try writer.prepareWrite(0)
        try writer.environment.dropDatabase(named: ownName("tracking"), in: transaction)
    }

    // MARK: - The end of the step

    func replaceTables() throws {
        lastInsert = nil
        var names = steps.names
        for source in plan.source {
            names.remove(DatabaseNames.entity(source.entity.name))
            for index in source.entity.indexes { names.remove(DatabaseNames.index(index, of: source.entity.name)) }
        }
        for destination in plan.destinations {
            let entity = destination.layout.entity
            let records = try store(entity.name, source: false)
            // A kept entity keeps the databases of the indexes it keeps as they were, and so does a mapped one
            // those the plan's filling provably leaves as they are; every other index is built anew, into a
            // database of the step's own.
            let keptIndexes = Set(
                copied.contains(entity.name) || changedByMappingCode.contains(entity.name)
                    ? []
                    : entity.indexes.filter {
                        destination.keptSource?.entity.indexes.contains($0)
                            ?? unchangedIndexes[entity.name]?.contains($0) ?? false
                    }
                    .map { DatabaseNames.index($0, of: entity.name) })
            let indexed = try EntityStore(
                layout: destination.layout,
                names: { logical in
                    if logical == DatabaseNames.entity(entity.name) { return records.databaseName }
                    return keptIndexes.contains(logical) ? self.steps.names.physical(logical) : self.ownName(logical)
                }, environment: writer.environment, transaction: transaction)
            try buildIndexes(
                indexed.indexes.filter { !keptIndexes.contains(DatabaseNames.index($0.index, of: entity.name)) },
                of: indexed)
            names.map(DatabaseNames.entity(entity.name), to: indexed.databaseName)
            for index in indexed.indexes {
                names.map(DatabaseNames.index(index.index, of: entity.name), to: index.databaseName)
            }
            destinations[entity.name] = indexed
        }
        try steps.stepEnded(names: names, schema: plan.destinations.map(\.layout.entity))
    }

    /// The indexes of each destination entity that the step fills from a source entity of the same name whose
    /// index entries it provably leaves as they are: the entity is filled by nothing but one copy or transform
    /// mapping (or an inferred copy) of that source — one record per source record — its primary key and the
    /// index's attributes are the source's attributes of the same names and descriptions, unmapped by closures, and
    /// the source has the same index. Each record then keeps its key and the values the index files it by, so the
    /// source's index database is the destination's, without a walk to build it (unless mapping code writes to the
    /// entity: ``changedByMappingCode``).
    static func unchangedIndexes(_ plan: MigrationStepPlan) -> [String: Set<Index>] {
        var kept: [String: Set<Index>] = [:]
        for destination in plan.destinations where destination.keptSource == nil {
            let layout = destination.layout
            let name = destination.name
            let fillers = plan.mappings.filter { $0.destinationEntity == name }
            let source: RecordLayout
            let mapping: RecordMapping
            let closures: [String: AttributeMapping]
            if fillers.isEmpty, let inferred = destination.inferredSource,
                let inferredMapping = destination.inferredMapping
            {
                (source, mapping, closures) = (inferred, inferredMapping, [:])
            } else if fillers.count == 1, let filler = fillers.first, [.copy, .transform].contains(filler.kind),
                let sourceName = filler.sourceEntity,
                let mapped = plan.source.first(where: { $0.entity.name == sourceName })
            {
                let renames = MigrationRules.renames(of: layout, from: mapped)
                (source, mapping, closures) = (
                    mapped, RecordMapping(from: mapped, to: layout, renamed: renames), filler.attributeMappings
                )
            } else {
                continue
            }
            guard source.entity.name == name else { continue }
            // Whether the destination's attribute `attribute` holds, in every record, the value of the source's
            // attribute of the same name and description.
            func unchanged(_ attribute: String) -> Bool {
                guard closures[attribute] == nil, let position = layout.position(of: attribute),
                    let origin = source.position(of: attribute), mapping.sources[position] == origin
                else { return false }
                return source.entity.attributes[origin] == layout.entity.attributes[position]
            }
            guard unchanged(layout.entity.primaryKey) else { continue }
            let indexes = layout.entity.indexes.filter { index in
                source.entity.indexes.contains(index) && index.attributes.allSatisfy(unchanged)
            }
            if !indexes.isEmpty { kept[name] = Set(indexes) }
        }
        return kept
    }

    /// Files every record of `store` in the (empty) index databases `indexes`, in one walk.
    private func buildIndexes(_ indexes: [EntityStore.IndexStore], of store: EntityStore) throws {
        guard !indexes.isEmpty else { return }
        let name = store.layout.entity.name
        try writer.scan(store.dbi) { key, stored in
            let record = try values(stored, key: key, in: store, layout: store.layout)
            for index in indexes {
                guard let indexKey = writer.sealer.indexKey(of: record.values, in: index) else { continue }
                try writer.prepareWrite(indexKey.count + key.count)
                guard try transaction.put(index.dbi, indexKey, key, flags: index.index.isUnique ? MDB_NOOVERWRITE : 0)
                else {
                    throw PersistenceError(
                        .uniqueViolation,
                        "records of '\(name)' share values in the unique index on "
                            + index.index.attributes.joined(separator: ", "))
                }
            }
            return true
        }
    }

    func renameAliasTargets(from old: String, to new: String) throws {
        steps.noteRename(from: old, to: new)
    }
}
