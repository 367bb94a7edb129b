internal import CLMDB
import Crypto
import Foundation
public import PersistenceCore

/// The transaction context of an ``LMDBDatabase``: the typed operations of `DatabaseContext`, in one LMDB
/// transaction.
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws `contextExpired`.
/// Equality conditions (`==`, `in`) on an attribute with a single-attribute index use the index; other conditions
/// scan the entity's records (decrypting each when the store is encrypted).
public final class LMDBContext: DatabaseContext, RecordValueAccess {
    /// The innermost open transaction: the write's own, or the savepoint's nested in it.
    private(set) var transaction: Transaction
    private let stores: EntityStores
    let sealer: ValueSealer
    /// Whether this context belongs to a write transaction.
    public let isWritable: Bool
    private var isExpired = false
    /// The nonce sequence of this write, loaded from the meta database on first use.
    private var nonces: NonceSequence?
    private let metaDBI: MDB_dbi
    let aliasDBI: MDB_dbi
    /// What this write changed, for observers; `nil` in a read.
    let recorder: ChangeRecorder?
    let instrumentation: Instrumentation
    /// The cancellation flag of the async call this transaction runs for, if any.
    private let cancellation = CancellationFlag.current

    init(
        transaction: Transaction, stores: EntityStores, sealer: ValueSealer, metaDBI: MDB_dbi, aliasDBI: MDB_dbi,
        recorder: ChangeRecorder?, instrumentation: Instrumentation
    ) {
        self.instrumentation = instrumentation
        self.transaction = transaction
        self.stores = stores
        self.sealer = sealer
        self.metaDBI = metaDBI
        self.aliasDBI = aliasDBI
        self.recorder = recorder
        isWritable = !transaction.isReadOnly
    }

    /// Ends the context's use; a write's nonces are noted as used whether or not it commits.
    func expire() {
        isExpired = true
        if let nonces { transaction.environment.noteNonces(upTo: nonces.counter) }
    }

    /// Throws `CancellationError` when the async call this transaction runs for was cancelled.
    @inline(__always)
    private func checkCancelled() throws {
        if let cancellation, cancellation.isCancelled { throw CancellationError() }
    }

    /// Persists the nonce counter in this write, so nonces are never reused under the store's key.
    func finish() throws {
        guard let nonces else { return }
        try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, metaDBI, transaction)
    }

    @inline(__always)
    private var coders = RecordCoders()

    private func reader(for store: EntityStore) -> RecordReader { coders.reader(for: store.layout) }

    private func encode<E: Entity>(_ entity: E, _ store: EntityStore) throws -> [Value] {
        try coders.writer(for: store.layout).encode(entity)
    }

    func use(writing: Bool) throws {
        guard !isExpired else {
            throw PersistenceError(.contextExpired, "a context was used after its transaction block ended")
        }
        if writing && !isWritable {
            throw PersistenceError(.readOnly, "a read transaction can't change the database")
        }
    }

    // MARK: - Typed operations

    public func create<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        instrumentation.trace("insert", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        try insert(values, into: store)
        recorder?.record(.insert, store.layout, key: values[store.layout.primaryKeyIndex])
    }

    public func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        instrumentation.trace("get by primary key", entity: store.layout.entity.name)
        let key = try recordKey(id.storedValue, store)
        guard let values = try load(key, store) else { return nil }
        return try reader(for: store).decode(E.self, from: values)
    }

    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        var entities: [E] = []
        try forEach(type, query: query) { entities.append($0) }
        return entities
    }

    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        instrumentation.trace("query", entity: store.layout.entity.name)
        let resolved = try query.resolve(in: store.layout)
        let reader = reader(for: store)
        try visitSelected(resolved, store) { try body(reader.decode(E.self, from: $0)) }
    }

    public func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        instrumentation.trace("count", entity: store.layout.entity.name)
        guard let condition else { return try transaction.count(store.dbi) }
        return try matching(condition.resolve(in: store.layout), store).count
    }

    public func update<E: Entity>(_ entity: E) throws {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        instrumentation.trace("update", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        guard let old = try load(key, store) else {
            throw PersistenceError(.notFound, "no \(store.layout.entity.name) has that primary key")
        }
        try replace(old, with: values, key: key, in: store)
        recorder?.record(.update, store.layout, key: values[store.layout.primaryKeyIndex])
    }

    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        instrumentation.trace("upsert", entity: store.layout.entity.name)
        let values = try encode(entity, store)
        let primaryKey = values[store.layout.primaryKeyIndex]
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else {
            try insert(values, into: store)
            recorder?.record(.insert, store.layout, key: primaryKey)
            return .inserted
        }
        let storedStamp = store.layout.stampIndex.map { old[$0] } ?? .null
        guard let written = store.layout.stampedValues(values, over: storedStamp) else { return .ignoredAsStale }
        try replace(old, with: written, key: key, in: store)
        recorder?.record(.update, store.layout, key: primaryKey)
        return .updated
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        try deleteRecord(type, key: id.storedValue)
    }

    package func deleteRecord<E: Entity>(_ type: E.Type, key primaryKey: Value) throws -> Bool {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        instrumentation.trace("delete by primary key", entity: store.layout.entity.name)
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else { return false }
        try remove(old, key: key, from: store)
        recorder?.record(.delete, store.layout, key: primaryKey)
        return true
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, where condition: Condition?, _ body: ([Value]) throws -> Void
    ) throws {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        instrumentation.trace("query", entity: store.layout.entity.name)
        try visitSelected(Query(where: condition).resolve(in: store.layout), store, body)
    }

    // MARK: - Savepoints

    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        try use(writing: true)
        let parent = transaction
        let nested = try Transaction(nestedIn: parent)
        let mark = recorder?.mark()
        transaction = nested
        do {
            let result = try body()
            transaction = parent
            try nested.commit()
            return result
        } catch {
            transaction = parent
            nested.abort()
            if let mark { recorder?.rollBack(to: mark) }
            throw error
        }
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        let store = try stores.store(for: E.self)
        instrumentation.trace("delete matching", entity: store.layout.entity.name)
        guard let condition else {
            if let recorder, recorder.recordsKeys {
                // Change-set observers want each deleted key: read them before emptying (only then).
                for record in try matching(nil, store) {
                    recorder.record(.delete, store.layout, key: record.values[store.layout.primaryKeyIndex])
                }
            }
            let count = try transaction.count(store.dbi)
            try transaction.empty(store.dbi)
            for index in store.indexes { try transaction.empty(index.dbi) }
            if count > 0, let recorder, !recorder.recordsKeys { recorder.recordUntracked(store.layout) }
            return count
        }
        let doomed = try matching(condition.resolve(in: store.layout), store)
        for record in doomed {
            try checkCancelled()
            try remove(record.values, key: record.key, from: store)
            recorder?.record(.delete, store.layout, key: record.values[store.layout.primaryKeyIndex])
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

    // MARK: - Records and indexes

    /// The key bytes of a primary-key value, checked against LMDB's key size limit.
    private func recordKey(_ value: Value, _ store: EntityStore) throws -> Data {
        try KeyCodec.recordKey(
            value, of: store.layout.entity.name, maximumSize: transaction.environment.maximumKeySize)
    }

    private func load(_ key: Data, _ store: EntityStore) throws -> [Value]? {
        try transaction.withValue(store.dbi, key) { stored in
            try key.withUnsafeBytes { try opened(stored, store, key: $0) }
        }
    }

    /// A record's values from its stored bytes; a record that fails authentication is logged and counted.
    private func opened(_ stored: UnsafeRawBufferPointer, _ store: EntityStore, key: UnsafeRawBufferPointer) throws
        -> [Value]
    {
        do {
            return try checked(sealer.open(stored, entity: store, key: key), store)
        } catch let error as PersistenceError where error.code == .authenticationFailed {
            instrumentation.authenticationFailed(passphrase: false, entity: store.layout.entity.name)
            throw error
        }
    }

    private func checked(_ values: [Value], _ store: EntityStore) throws -> [Value] {
        guard values.count == store.layout.names.count else {
            throw PersistenceError(.corrupt, "a stored '\(store.layout.entity.name)' record has the wrong shape")
        }
        return values
    }

    private func seal(_ values: [Value], key: Data, _ store: EntityStore) throws -> Data {
        try sealer.seal(values, entity: store, key: key) { try nextNonce() }
    }

    /// The next nonce of this write, continuing from the counter the meta database holds.
    func nextNonce() throws -> AES.GCM.Nonce {
        var sequence =
            try nonces
            ?? NonceSequence(
                startingAt: transaction.environment.nonceStart(
                    persisted: StoreMetadata.readNumber(.nonceCounter, metaDBI, transaction) ?? 0))
        defer { nonces = sequence }
        return try sequence.next()
    }

    /// The index key of a record in `index`, or `nil` when an indexed value is `nil` (such records aren't
    /// indexed: `nil`s never collide in unique indexes, and lookups by `nil` scan).
    private func indexKey(_ values: [Value], _ index: EntityStore.IndexStore) -> Data? {
        sealer.indexKey(of: values, in: index)
    }

    private func insert(_ values: [Value], into store: EntityStore) throws {
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        try checkUnique(values, key: key, store)
        guard try transaction.put(store.dbi, key, seal(values, key: key, store), flags: MDB_NOOVERWRITE) else {
            throw PersistenceError(.duplicateKey, "a '\(store.layout.entity.name)' record has that primary key")
        }
        try addIndexes(values, key: key, store)
    }

    private func replace(_ old: [Value], with values: [Value], key: Data, in store: EntityStore) throws {
        try checkUnique(values, key: key, store)
        try removeIndexes(old, key: key, store)
        try transaction.put(store.dbi, key, seal(values, key: key, store))
        try addIndexes(values, key: key, store)
    }

    private func remove(_ old: [Value], key: Data, from store: EntityStore) throws {
        try removeIndexes(old, key: key, store)
        try transaction.delete(store.dbi, key)
    }

    /// Refuses values a unique index already holds for another record — before anything is written, so a refused
    /// change leaves the store as it was.
    private func checkUnique(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes where index.index.isUnique {
            guard let indexKey = indexKey(values, index), let owner = try transaction.get(index.dbi, indexKey),
                owner != key
            else { continue }
            throw PersistenceError(
                .uniqueViolation,
                "a '\(store.layout.entity.name)' record already has those values in "
                    + index.index.attributes.joined(separator: ", "))
        }
    }

    private func addIndexes(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes {
            guard let indexKey = indexKey(values, index) else { continue }
            try transaction.put(index.dbi, indexKey, key)
        }
    }

    private func removeIndexes(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes {
            guard let indexKey = indexKey(values, index) else { continue }
            try transaction.delete(index.dbi, indexKey, value: index.index.isUnique ? nil : key)
        }
    }

    // MARK: - Queries

    /// Calls `visit` with the values of each record a query selects, in its order and within its window.
    ///
    /// Records come in key order, and keys are encoded so that key order is primary-key order: in the default
    /// order the records stream, one at a time. Any other order needs them all, to sort.
    private func visitSelected(_ query: ResolvedQuery, _ store: EntityStore, _ visit: ([Value]) throws -> Void)
        throws
    {
        guard query.isPrimaryKeyOrder else {
            let records = try matching(query.condition, store).map(\.values)
            for values in query.ordered(records, inPrimaryKeyOrder: true) { try visit(values) }
            return
        }
        var skipped = 0
        var remaining = query.limit ?? Int.max
        guard remaining > 0 else { return }
        try visitMatching(query.condition, store) { _, values in
            guard skipped >= query.offset else {
                skipped += 1
                return true
            }
            try visit(values)
            remaining -= 1
            return remaining > 0
        }
    }

    /// The records matching `condition` (all when `nil`), in primary-key order, with their keys.
    private func matching(_ condition: ResolvedCondition?, _ store: EntityStore) throws -> [(
        key: Data, values: [Value]
    )] {
        var found: [(key: Data, values: [Value])] = []
        try visitMatching(condition, store) { key, values in
            found.append((Data(key), values))
            return true
        }
        return found
    }

    /// Calls `visit` with each record matching `condition` (all when `nil`), in primary-key order; `visit`
    /// returns `false` to stop. The key's bytes are valid only during the call: `visit` copies them to keep them.
    private func visitMatching(
        _ condition: ResolvedCondition?, _ store: EntityStore,
        _ visit: (UnsafeRawBufferPointer, [Value]) throws -> Bool
    ) throws {
        if let condition, let keys = try candidates(condition, store) {
            for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                try checkCancelled()
                guard let values = try load(key, store), condition.matches(values) else { continue }
                guard try key.withUnsafeBytes({ try visit($0, values) }) else { return }
            }
            return
        }
        try transaction.forEach(store.dbi) { key, stored in
            try checkCancelled()
            let values = try opened(stored, store, key: key)
            guard condition?.matches(values) ?? true else { return true }
            return try visit(key, values)
        }
    }

    /// Primary keys an index narrows `condition` to, or `nil` when no index applies (then the caller scans).
    private func candidates(_ condition: ResolvedCondition, _ store: EntityStore) throws -> Set<Data>? {
        switch condition {
        case .comparison(let at, .equal, let value):
            return try lookup([value], at: at, store)
        case .oneOf(let at, let values):
            return try lookup(values, at: at, store)
        case .and(let conditions):
            for condition in conditions {
                if let keys = try candidates(condition, store) { return keys }
            }
            return nil
        default:
            return nil
        }
    }

    /// Keys of records whose attribute at `at` equals one of `values`, through its index; `nil` when there is no
    /// index or a value can't be looked up exactly (`nil`, or another storage class that compares numerically).
    private func lookup(_ values: [Value], at position: Int, _ store: EntityStore) throws -> Set<Data>? {
        guard let index = store.index(on: position) else { return nil }
        let storage = store.layout.types[position].storageClass
        guard values.allSatisfy({ $0.storageClass == storage }) else { return nil }
        var keys = Set<Data>()
        for value in values {
            let indexKey = sealer.indexKey([value])
            if index.index.isUnique {
                // Not a sorted-duplicates database: MDB_NEXT_DUP would step on to the next key.
                if let key = try transaction.get(index.dbi, indexKey) { keys.insert(key) }
            } else {
                keys.formUnion(try transaction.duplicates(index.dbi, indexKey))
            }
        }
        return keys
    }
}

/// The model's entity stores, by type.
struct EntityStores: Sendable {
    private let byType: [ObjectIdentifier: EntityStore]
    /// Every store, in model order.
    let all: [EntityStore]

    init(model: Model, stores: [EntityStore]) {
        all = stores
        var byType: [ObjectIdentifier: EntityStore] = [:]
        for (type, store) in zip(model.entities, stores) { byType[ObjectIdentifier(type)] = store }
        self.byType = byType
    }

    func store<E: Entity>(for type: E.Type) throws -> EntityStore {
        guard let store = byType[ObjectIdentifier(type)] else {
            throw PersistenceError(.unknownEntity, "\(E.self) is not part of this database's model")
        }
        return store
    }
}
