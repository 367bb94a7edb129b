@_spi(PersistenceBackend) package import PersistenceCore

/// A synced model's entities by name, with their layouts and the order pulled and pushed changes are applied in:
/// referenced entities before those that refer to them (so a record's parent exists when it is written), deletions
/// the other way round.
package struct SyncedEntities: Sendable {
    package struct Entry: Sendable {
        package let type: any Entity.Type
        package let layout: RecordLayout
        /// 0 for an entity that refers to no other; else one more than the highest rank among those it refers to.
        package let rank: Int
        /// Its to-one references: the foreign key's position in its records, and the entity referred to.
        package let references: [(foreignKey: Int, target: String)]
        /// Whether to-ones of some entity refer to it: deleting its records applies their delete rules.
        package let hasDeleteRules: Bool
    }

    package let model: Model
    private let entries: [String: Entry]

    /// The entities of `model` except the sync journal's own.
    /// - Throws: `invalidSchema` when the model's entities can't be described.
    package init(model: Model) throws {
        self.model = model
        let layouts = try model.layouts()
        let graph = try ModelGraph(model: model, layouts: layouts)
        var ranks = Array(repeating: 0, count: layouts.count)
        // Longest chain of references, at most one pass per entity (cycles and self-references stop there).
        for _ in layouts.indices {
            var changed = false
            for (position, references) in graph.references.enumerated() {
                for reference in references where reference.target != position {
                    let rank = min(ranks[reference.target] + 1, layouts.count)
                    if rank > ranks[position] {
                        ranks[position] = rank
                        changed = true
                    }
                }
            }
            if !changed { break }
        }
        var entries: [String: Entry] = [:]
        for (position, type) in model.entities.enumerated()
        where !SyncJournalNames.all.contains(layouts[position].entity.name) {
            entries[layouts[position].entity.name] = Entry(
                type: type, layout: layouts[position], rank: ranks[position],
                references: graph.references[position].map { ($0.foreignKey, layouts[$0.target].entity.name) },
                hasDeleteRules: !graph.referrers[position].isEmpty)
        }
        self.entries = entries
    }

    /// Every synced entity, referenced ones first.
    package var all: [Entry] {
        entries.values.sorted { ($0.rank, $0.layout.entity.name) < ($1.rank, $1.layout.entity.name) }
    }

    /// Every synced entity, by name in UTF-8 byte order (the content hash's order).
    package var byName: [Entry] {
        entries.values.sorted { $0.layout.entity.name.utf8.lexicographicallyPrecedes($1.layout.entity.name.utf8) }
    }

    /// The entity named `name`.
    /// - Throws: `unknownEntity` when the model has none (the two sides' models differ).
    package func entry(_ name: String) throws -> Entry {
        guard let entry = entries[name] else {
            throw PersistenceError(.unknownEntity, "the synced model has no entity '\(name)'")
        }
        return entry
    }

    /// `changes` in the order to apply them: records written parents first, then deletions children first; each
    /// group otherwise in its given order.
    package func applyOrder<C>(_ changes: [C], entity: (C) -> String, deletes: (C) -> Bool) -> [C] {
        let ranked = changes.enumerated().map { (rank: entries[entity($0.element)]?.rank ?? 0, offset: $0.offset) }
        let writes = ranked.filter { !deletes(changes[$0.offset]) }.sorted {
            ($0.rank, $0.offset) < ($1.rank, $1.offset)
        }
        let deletions = ranked.filter { deletes(changes[$0.offset]) }
            .sorted { (-$0.rank, $0.offset) < (-$1.rank, $1.offset) }
        return (writes + deletions).map { changes[$0.offset] }
    }
}

extension DatabaseContext {
    /// The context's record-level access: sync reads and writes records as values, never through the entity.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a context not built on the core's `StoreContext`.
    private func records() throws -> any RecordValueAccess {
        guard let access = recordAccess else {
            throw PersistenceError(.invalidArgument, "sync runs on the library's own backends' contexts")
        }
        return access
    }

    /// The stored record of `entry`'s entity with primary key `key`, or `nil`.
    package func syncedRecord(_ entry: SyncedEntities.Entry, key: Value) throws -> Record? {
        try syncedRecord(entry.type, key: key, layout: entry.layout)
    }

    private func syncedRecord<E: Entity>(_ type: E.Type, key: Value, layout: RecordLayout) throws -> Record? {
        try records().recordValues(E.self, key: key).map { try Record(layout: layout, values: $0) }
    }

    /// The stored records of `entry`'s entity with these primary keys, by key.
    package func syncedRecords(_ entry: SyncedEntities.Entry, keys: [Value], where condition: Condition? = nil) throws
        -> [Value: Record]
    {
        try syncedRecords(entry.type, keys: keys, layout: entry.layout, where: condition)
    }

    private func syncedRecords<E: Entity>(
        _ type: E.Type, keys: [Value], layout: RecordLayout, where condition: Condition?
    ) throws -> [Value: Record] {
        let byKey = Field(layout.names[layout.primaryKeyIndex]).in(keys)
        var found: [Value: Record] = [:]
        try records().forEachRecordValues(E.self, query: Query(where: condition.map { byKey && $0 } ?? byKey)) {
            let record = try Record(layout: layout, values: $0)
            if found[record.primaryKey] == nil { found[record.primaryKey] = record }
        }
        return found
    }

    /// Calls `body` with every stored record of `entry`'s entity for which `condition` holds (all when `nil`), in
    /// primary-key order, one at a time.
    package func forEachSyncedRecord(
        _ entry: SyncedEntities.Entry, where condition: Condition? = nil, _ body: (Record) throws -> Void
    ) throws {
        try forEachSyncedRecord(entry.type, layout: entry.layout, where: condition, body)
    }

    private func forEachSyncedRecord<E: Entity>(
        _ type: E.Type, layout: RecordLayout, where condition: Condition?, _ body: (Record) throws -> Void
    ) throws {
        try records().forEachRecordValues(E.self, query: Query(where: condition)) {
            try body(Record(layout: layout, values: $0))
        }
    }

    /// Calls `body` with the primary key of every stored record of `entry`'s entity.
    package func forEachSyncedKey(_ entry: SyncedEntities.Entry, _ body: (Value) throws -> Void) throws {
        try forEachSyncedKey(entry.type, layout: entry.layout, body)
    }

    private func forEachSyncedKey<E: Entity>(_ type: E.Type, layout: RecordLayout, _ body: (Value) throws -> Void)
        throws
    {
        try records().forEachRecordValues(E.self, query: Query(), attributes: [layout.primaryKeyIndex]) {
            try body($0[0])
        }
    }

    /// Writes `record` as the stored state of its entity's record (created or replaced whole), or deletes the record
    /// with `key` when `record` is `nil`.
    /// - Parameter exists: Whether the record is stored now, when the caller knows (it's looked up otherwise).
    package func storeSynced(_ entry: SyncedEntities.Entry, key: Value, record: Record?, exists: Bool? = nil) throws {
        try storeSynced(entry.type, key: key, layout: entry.layout, record: record, exists: exists)
    }

    private func storeSynced<E: Entity>(
        _ type: E.Type, key: Value, layout: RecordLayout, record: Record?, exists: Bool?
    ) throws {
        guard let record else {
            _ = try delete(E.self, where: Field(layout.names[layout.primaryKeyIndex]) == key)
            return
        }
        let access = try records()
        // Not `upsert`: its stamp rule would keep a stored record with a newer stamp than the state being stored.
        let stored = try exists ?? access.containsRecord(E.self, key: record.primaryKey)
        try access.storeRecord(E.self, values: record.values, exists: stored)
    }

    /// Writes `records` of `entry`'s entity as their stored states (created, or replaced whole where `exists`) in few
    /// statements, all or nothing: what `storeSynced` does for one, for a page or a push.
    package func storeSynced(_ entry: SyncedEntities.Entry, records: [Record], exists: [Bool]) throws {
        try storeSynced(entry.type, records: records, exists: exists)
    }

    private func storeSynced<E: Entity>(_ type: E.Type, records: [Record], exists: [Bool]) throws {
        try self.records().storeRecords(E.self, rows: records.map(\.values), exists: exists)
    }

    /// Which of `keys` are primary keys of stored records of `entry`'s entity (only the keys are read).
    package func storedSyncedKeys(_ entry: SyncedEntities.Entry, among keys: [Value]) throws -> Set<Value> {
        try storedKeys(entry.type, among: keys)
    }

    private func storedKeys<E: Entity>(_ type: E.Type, among keys: [Value]) throws -> Set<Value> {
        try records().storedKeys(E.self, among: keys)
    }

    /// Writes the journal entries `states` whole, in few statements (a query for which are stored, then the
    /// multi-row write): they replace the stored ones with their ids.
    package func storeJournal(_ states: [SyncRecordState]) throws {
        guard !states.isEmpty else { return }
        let access = try records()
        let stored = try access.storedKeys(SyncRecordState.self, among: states.map { .text($0.id) })
        let layout = access.graph.layouts[try access.graph.positions.position(of: SyncRecordState.self)]
        try access.storeRecords(
            SyncRecordState.self, rows: states.map { $0.values(in: layout) },
            exists: states.map { stored.contains(.text($0.id)) })
    }

    /// Deletes the records of `entry`'s entity with these keys, applying the delete rules of what refers to them.
    package func deleteSynced(_ entry: SyncedEntities.Entry, keys: [Value]) throws {
        guard !keys.isEmpty else { return }
        try deleteSynced(entry.type, keys: keys, layout: entry.layout)
    }

    private func deleteSynced<E: Entity>(_ type: E.Type, keys: [Value], layout: RecordLayout) throws {
        _ = try delete(E.self, where: Field(layout.names[layout.primaryKeyIndex]).in(keys))
    }

    /// Whether the store holds any record of `entry`'s entity.
    package func holdsSyncedRecords(_ entry: SyncedEntities.Entry) throws -> Bool {
        try count(entry.type) > 0
    }
}
