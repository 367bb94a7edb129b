internal import CLMDB
import Foundation
public import PersistenceCore

/// The transaction context of an ``LMDBDatabase``: the typed operations of `DatabaseContext`, in one LMDB
/// transaction.
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws `contextExpired`.
/// Equality conditions (`==`, `in`) on an attribute with a single-attribute index use the index; other conditions
/// scan the entity's records (decrypting each when the store is encrypted).
public final class LMDBContext: DatabaseContext, RecordValueAccess, TransactionContext {
    /// The innermost open transaction: the write's own, or the savepoint's nested in it.
    /// (Unchecked exclusivity: read by every operation; a savepoint only swaps it between operations.)
    @exclusivity(unchecked) private(set) var transaction: Transaction
    let stores: EntityLookup<EntityStore>
    let sealer: ValueSealer
    /// What every backend's context keeps: whether it writes, the change recorder, instrumentation, cancellation.
    let state: ContextState
    // Exclusivity is unchecked on the context's own state: a context is used on one thread, inside its transaction
    // block, and no access to these overlaps another; the dynamic checks cost more than the reads they guard.
    @exclusivity(unchecked) private var isExpired = false
    /// Record readers and writers, reused for every record of the transaction.
    @exclusivity(unchecked) var coders = RecordCoders()
    /// The nonce sequence of this write, loaded from the meta database on first use.
    var nonces: NonceSequence?
    let metaDBI: MDB_dbi
    let aliasDBI: MDB_dbi

    /// Whether this context belongs to a write transaction.
    public var isWritable: Bool { state.isWritable }

    init(
        transaction: Transaction, stores: EntityLookup<EntityStore>, sealer: ValueSealer, metaDBI: MDB_dbi,
        aliasDBI: MDB_dbi, recorder: ChangeRecorder?, instrumentation: Instrumentation
    ) {
        self.transaction = transaction
        self.stores = stores
        hasRelationships = !stores.graph.isEmpty
        self.sealer = sealer
        self.metaDBI = metaDBI
        self.aliasDBI = aliasDBI
        state = ContextState(recorder: recorder, instrumentation: instrumentation)
    }

    /// Ends the context's use; a write's nonces are noted as used whether or not it commits.
    package func expire() {
        isExpired = true
        if let nonces { transaction.environment.noteNonces(upTo: nonces.counter) }
    }

    /// Persists the nonce counter in this write, so nonces are never reused under the store's key.
    package func prepareCommit() throws {
        guard let nonces else { return }
        try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, metaDBI, transaction)
    }

    package var graph: ModelGraph { stores.graph }
    /// Whether the model declares relationships: writes check foreign keys and deletes apply rules only then, so a
    /// model without any pays one test of this flag per operation.
    private let hasRelationships: Bool

    private func reader(for store: EntityStore) -> RecordReader { coders.reader(for: store.layout) }

    private func encode<E: Entity>(_ entity: E, _ store: EntityStore) throws -> [Value] {
        try coders.writer(for: store.layout).encode(entity)
    }

    @inline(__always)
    func use(writing: Bool) throws {
        guard !isExpired, !writing || state.isWritable else {
            throw state.refusal(writing: writing, expired: isExpired)
        }
    }

    // MARK: - Typed operations

    public func create<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("insert", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        if hasRelationships { try checkReferences(values, of: E.self) }
        try insert(values, into: store)
        state.recorder?.record(.insert, store.layout, key: values[store.layout.primaryKeyIndex])
    }

    public func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("get by primary key", entity: store.layout.entity.name)
        let key = try recordKey(id.storedValue, store)
        let reader = reader(for: store)
        guard try reader.refill({ try load(key, store, into: &$0) }) else { return nil }
        return try reader.decode(E.self)
    }

    // Inlinable so the array is of the app's own entity type: built in generic code, each append looked up the
    // array's type metadata (about 300 instructions a record).
    @inlinable
    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        var entities: [E] = []
        try forEachDecoded(type, query: query) { (entity: consuming E) in entities.append(entity) }
        return entities
    }

    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        try forEachDecoded(type, query: query) { try body($0) }
    }

    /// ``forEach(_:query:_:)`` handing each entity over to `body`: an array appends it without a copy.
    @usableFromInline
    func forEachDecoded<E: Entity>(_ type: E.Type, query: Query, _ body: (consuming E) throws -> Void) throws {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("query", entity: store.layout.entity.name)
        let resolved = try query.resolve(in: store.layout, graph: graph)
        let reader = reader(for: store)
        try visitSelected(resolved, store) { values in
            let entity = try reader.decode(E.self, from: values)
            // Hand the scan its array back before `body` runs: it refills it in place for the next record.
            reader.refill { $0 = [] }
            try body(entity)
        }
    }

    public func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("count", entity: store.layout.entity.name)
        guard let condition else { return try transaction.count(store.dbi) }
        return try matching(condition.resolve(in: store.layout, graph: graph), store).count
    }

    public func update<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("update", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        guard let old = try load(key, store) else {
            throw PersistenceError(.notFound, "no \(store.layout.entity.name) has that primary key")
        }
        if hasRelationships { try checkReferences(values, of: E.self) }
        try replace(old, with: values, key: key, in: store)
        state.recorder?.record(.update, store.layout, key: values[store.layout.primaryKeyIndex])
    }

    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("upsert", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        if hasRelationships { try checkReferences(values, of: E.self) }
        let primaryKey = values[store.layout.primaryKeyIndex]
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else {
            try insert(values, into: store)
            state.recorder?.record(.insert, store.layout, key: primaryKey)
            return .inserted
        }
        let storedStamp = store.layout.stampIndex.map { old[$0] } ?? .null
        guard let written = store.layout.stampedValues(values, over: storedStamp) else { return .ignoredAsStale }
        try replace(old, with: written, key: key, in: store)
        state.recorder?.record(.update, store.layout, key: primaryKey)
        return .updated
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        guard hasRelationships else { return try deleteRecord(type, key: id.storedValue) }
        return try deleteRecordFollowingRules(type, key: id.storedValue)
    }

    package func requireWritable() throws { try use(writing: true) }

    package func containsRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        // Whether the key is there: nothing to decrypt or decode (a foreign-key check on every write asks this).
        return try transaction.get(store.dbi, try recordKey(key, store)) != nil
    }

    package func replaceRecord<E: Entity>(_ type: E.Type, values: [Value]) throws {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        let primaryKey = values[store.layout.primaryKeyIndex]
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else {
            throw PersistenceError(.notFound, "no \(store.layout.entity.name) has that primary key")
        }
        try replace(old, with: values, key: key, in: store)
        state.recorder?.record(.update, store.layout, key: primaryKey)
    }

    package func deleteRecord<E: Entity>(_ type: E.Type, key primaryKey: Value) throws -> Bool {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("delete by primary key", entity: store.layout.entity.name)
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else { return false }
        try remove(old, key: key, from: store)
        state.recorder?.record(.delete, store.layout, key: primaryKey)
        return true
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, _ body: ([Value]) throws -> Void
    ) throws {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("query", entity: store.layout.entity.name)
        try visitSelected(query.resolve(in: store.layout, graph: graph), store, body)
    }

    // MARK: - Savepoints

    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        try use(writing: true)
        let parent = transaction
        let nested = try Transaction(nestedIn: parent)
        let mark = state.recorder?.mark()
        transaction = nested
        do {
            let result = try body()
            transaction = parent
            try nested.commit()
            return result
        } catch {
            transaction = parent
            nested.abort()
            if let mark { state.recorder?.rollBack(to: mark) }
            throw error
        }
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        if hasRelationships, try hasDeleteRules(type) { return try deleteFollowingRules(type, where: condition) }
        return try deleteRecords(type, where: condition)
    }

    package func deleteRecords<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("delete matching", entity: store.layout.entity.name)
        guard let condition else {
            if let recorder = state.recorder, recorder.recordsKeys {
                // Change-set observers want each deleted key: read them before emptying (only then).
                for record in try matching(nil, store) {
                    recorder.record(.delete, store.layout, key: record.values[store.layout.primaryKeyIndex])
                }
            }
            let count = try transaction.count(store.dbi)
            try transaction.empty(store.dbi)
            for index in store.indexes { try transaction.empty(index.dbi) }
            if count > 0, let recorder = state.recorder, !recorder.recordsKeys {
                recorder.recordUntracked(store.layout)
            }
            return count
        }
        let doomed = try matching(condition.resolve(in: store.layout, graph: graph), store)
        for record in doomed {
            try state.cancellation?.check()
            try remove(record.values, key: record.key, from: store)
            state.recorder?.record(.delete, store.layout, key: record.values[store.layout.primaryKeyIndex])
        }
        return doomed.count
    }

    // MARK: - Stored bytes (for tamper tests)

    /// The bytes stored for a record, as on disk (sealed when the store is encrypted).
    func storedBytes<E: Entity>(of type: E.Type, id: E.ID) throws -> Data? {
        let store = try stores.store(for: E.self)
        return try transaction.get(store.dbi, recordKey(id.storedValue, store))
    }

    /// Overwrites the bytes stored for a record, bypassing sealing and indexes — to simulate tampering.
    func overwriteStoredBytes<E: Entity>(of type: E.Type, id: E.ID, with bytes: Data) throws {
        let store = try stores.store(for: E.self)
        try transaction.put(store.dbi, recordKey(id.storedValue, store), bytes)
    }
}
