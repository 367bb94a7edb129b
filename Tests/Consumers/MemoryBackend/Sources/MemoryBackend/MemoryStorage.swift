@_spi(PersistenceBackend) public import PersistenceCore

/// The context of a ``MemoryDatabase``'s transactions: the core's one context, over this backend's storage.
public typealias MemoryContext = StoreContext<MemoryStorage>

/// One transaction's records: the store's version the transaction began with, which a write changes in place and
/// the database publishes when it commits.
///
/// Conditions, related conditions, orders and windows are evaluated by the core (`ResolvedCondition.matches`,
/// `answeringRelated(visitingMatching:)`, `ResolvedQuery.ordered`) over the records' values, as LMDB's scans do.
/// Apps never use it by name: it is what ``MemoryContext`` works through.
public final class MemoryStorage: RecordStorage {
    /// The transaction's version of the store. (Unchecked exclusivity: a storage is used on one thread, and no
    /// access to it overlaps another.)
    @exclusivity(unchecked) private(set) var snapshot: MemorySnapshot
    /// The slot of each model entity's table in ``snapshot``, in model order.
    let slots: [Int]
    /// The model's layouts, in model order.
    let layouts: [RecordLayout]
    let instrumentation: Instrumentation

    init(snapshot: MemorySnapshot, slots: [Int], layouts: [RecordLayout], instrumentation: Instrumentation) {
        self.snapshot = snapshot
        self.slots = slots
        self.layouts = layouts
        self.instrumentation = instrumentation
    }

    /// The table of the model's entity at `entity`.
    func table(_ entity: Int) -> MemoryTable { snapshot.tables[slots[entity]] }

    /// The name of the model's entity at `entity`, for messages and traces.
    func name(_ entity: Int) -> String { layouts[entity].entity.name }

    @_spi(PersistenceBackend) public func checkUsable(writing: Bool) throws {}

    @_spi(PersistenceBackend) public func prepareCommit() throws {}

    @_spi(PersistenceBackend) public func expire() {}

    // MARK: - Records by key

    @_spi(PersistenceBackend) public func insert(_ values: [Value], entity: Int) throws {
        instrumentation.trace("insert", entity: name(entity))
        try snapshot.tables[slots[entity]].insert(values, entity: name(entity))
    }

    @_spi(PersistenceBackend) public func update(_ values: [Value], entity: Int) throws -> Bool {
        instrumentation.trace("update", entity: name(entity))
        let slot = slots[entity]
        guard let old = snapshot.tables[slot].records[values[layouts[entity].primaryKeyIndex]] else { return false }
        try snapshot.tables[slot].replace(old, with: values, entity: name(entity))
        return true
    }

    @_spi(PersistenceBackend) public func upsert(_ values: [Value], entity: Int) throws -> UpsertOutcome {
        instrumentation.trace("upsert", entity: name(entity))
        let layout = layouts[entity]
        let slot = slots[entity]
        guard let old = snapshot.tables[slot].records[values[layout.primaryKeyIndex]] else {
            try snapshot.tables[slot].insert(values, entity: name(entity))
            return .inserted
        }
        let storedStamp = layout.stampIndex.map { old[$0] } ?? .null
        guard let written = layout.stampedValues(values, over: storedStamp) else { return .ignoredAsStale }
        try snapshot.tables[slot].replace(old, with: written, entity: name(entity))
        return .updated
    }

    @_spi(PersistenceBackend) public func delete(key: Value, entity: Int) throws -> Bool {
        instrumentation.trace("delete by primary key", entity: name(entity))
        return snapshot.tables[slots[entity]].remove(key: key) != nil
    }

    @_spi(PersistenceBackend) public func contains(key: Value, entity: Int) throws -> Bool {
        table(entity).records[key] != nil
    }

    @_spi(PersistenceBackend) public func read(key: Value, entity: Int, into reader: RecordReader) throws
        -> StoredRecord
    {
        instrumentation.trace("get by primary key", entity: name(entity))
        guard let values = table(entity).records[key] else { return .absent }
        reader.refill { $0 = values }
        return .filled
    }

    // MARK: - Queries

    /// Hands each selected record to `reader`. The records are selected before the first visit, so a reentrant
    /// visit may change the table.
    @_spi(PersistenceBackend) public func scan(
        _ query: ResolvedQuery, entity: Int, reentrant: Bool, into reader: RecordReader,
        _ visit: ((any RecordRow)?) throws -> Void
    ) throws {
        instrumentation.trace("query", entity: name(entity))
        for values in try selected(query, entity) {
            reader.refill { $0 = values }
            try visit(nil)
        }
    }

    @_spi(PersistenceBackend) public func scanValues(
        _ query: ResolvedQuery, entity: Int, attributes positions: [Int]?, _ visit: ([Value]) throws -> Void
    ) throws {
        instrumentation.trace("query", entity: name(entity))
        let records = try selected(query, entity)
        guard let positions else { return try records.forEach(visit) }
        for values in records { try visit(positions.map { values[$0] }) }
    }

    @_spi(PersistenceBackend) public func count(_ condition: ResolvedCondition?, entity: Int) throws -> Int {
        instrumentation.trace("count", entity: name(entity))
        guard let condition else { return table(entity).records.count }
        var count = 0
        try visitMatching(condition, entity) { _ in count += 1 }
        return count
    }

    @_spi(PersistenceBackend) public func delete(
        matching condition: ResolvedCondition?, entity: Int, deleted: ((Value) -> Void)?
    ) throws -> Int {
        instrumentation.trace("delete matching", entity: name(entity))
        let slot = slots[entity]
        let primaryKey = layouts[entity].primaryKeyIndex
        guard let condition else {
            let count = snapshot.tables[slot].records.count
            if let deleted { snapshot.tables[slot].orderedKeys.forEach(deleted) }
            snapshot.tables[slot].removeAll()
            return count
        }
        var doomed: [Value] = []
        try visitMatching(condition, entity) { doomed.append($0[primaryKey]) }
        for key in doomed {
            _ = snapshot.tables[slot].remove(key: key)
            deleted?(key)
        }
        return doomed.count
    }

    // MARK: - Savepoints

    /// Keeps a copy of the transaction's version (a few retains) and puts it back when `body` throws.
    @_spi(PersistenceBackend) public func savepoint<R>(_ body: () throws -> R) throws -> R {
        let saved = snapshot
        do {
            return try body()
        } catch {
            snapshot = saved
            throw error
        }
    }

    // MARK: - Aliases

    @_spi(PersistenceBackend) public func aliasTarget(named name: String) throws -> AliasTarget? {
        snapshot.aliases[name]
    }

    @_spi(PersistenceBackend) public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        snapshot.aliases[name] = target
    }

    // MARK: - Selection

    /// The values of the records `query` selects, in its order and within its window.
    func selected(_ query: ResolvedQuery, _ entity: Int) throws -> [[Value]] {
        var matching: [[Value]] = []
        try visitMatching(query.condition, entity) { matching.append($0) }
        return query.ordered(matching, inPrimaryKeyOrder: true)
    }

    /// Calls `visit` with the values of each record of the entity at `entity` that matches `condition` (every one
    /// when `nil`), in primary-key order. Conditions on related records are answered first, by the core, through
    /// this same function on the related entity.
    func visitMatching(_ condition: ResolvedCondition?, _ entity: Int, _ visit: ([Value]) throws -> Void) throws {
        var condition = condition
        if let related = condition, related.isRelated {
            condition = try related.answeringRelated { try visitMatching($1, $0, $2) }
        }
        let table = table(entity)
        for key in table.orderedKeys {
            guard let values = table.records[key] else { continue }
            if let condition, !condition.matches(values) { continue }
            try visit(values)
        }
    }
}
