internal import CLMDB
import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// The context of an ``LMDBDatabase``'s transactions: the typed operations every backend has, in one LMDB
/// transaction.
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws `contextExpired`.
/// Equality conditions (`==`, `in`) on an attribute with a single-attribute index use the index; other conditions
/// scan the entity's records (decrypting each when the store is encrypted).
public typealias LMDBContext = StoreContext<LMDBStorage>

/// One LMDB transaction's record-level storage: each entity's named database keyed by primary key, its index
/// databases, values sealed when the store is encrypted.
///
/// Apps never use it by name: it is what ``LMDBContext`` works through.
public final class LMDBStorage: RecordStorage {
    /// The innermost open transaction: the write's own, or the savepoint's nested in it.
    /// (Unchecked exclusivity: read by every operation; a savepoint only swaps it between operations.)
    @exclusivity(unchecked) private(set) var transaction: Transaction
    let stores: EntityLookup<EntityStore>
    let sealer: ValueSealer
    let instrumentation: Instrumentation
    /// The cancellation flag of the async call this transaction runs for, if any.
    let cancellation = CancellationFlag.current
    /// The nonce sequence of this write, loaded from the meta database on first use.
    var nonces: NonceSequence?
    let metaDBI: MDB_dbi
    /// The aliases' database; `nil` where the store is read without one (the store tool's, of a file that has none).
    let aliasDBI: MDB_dbi?
    /// Whether a record that can't be read is named by its primary key in the error: in the store tool, which shows
    /// a store to its owner, never in an app's (its errors hold no stored value).
    let namesKeysInErrors: Bool

    init(
        transaction: Transaction, stores: EntityLookup<EntityStore>, sealer: ValueSealer, metaDBI: MDB_dbi,
        aliasDBI: MDB_dbi?, instrumentation: Instrumentation, namesKeysInErrors: Bool = false
    ) {
        self.transaction = transaction
        self.stores = stores
        self.sealer = sealer
        self.metaDBI = metaDBI
        self.aliasDBI = aliasDBI
        self.instrumentation = instrumentation
        self.namesKeysInErrors = namesKeysInErrors
    }

    @_spi(PersistenceBackend) public func checkUsable(writing: Bool) throws {}

    /// Ends the transaction's use; a write's nonces are noted as used whether or not it commits.
    @_spi(PersistenceBackend) public func expire() {
        if let nonces { transaction.environment.noteNonces(upTo: nonces.counter) }
    }

    /// Persists the nonce counter in this write, so nonces are never reused under the store's key.
    @_spi(PersistenceBackend) public func prepareCommit() throws {
        guard let nonces else { return }
        try StoreMetadata.writeNumber(.nonceCounter, nonces.counter, metaDBI, transaction)
    }

    // MARK: - Records by key

    @_spi(PersistenceBackend) public func insert(_ values: [Value], entity: Int) throws {
        let store = stores.all[entity]
        instrumentation.trace("insert", entity: store.layout.entity.name)
        try insert(values, into: store)
    }

    @_spi(PersistenceBackend) public func update(_ values: [Value], entity: Int) throws -> Bool {
        let store = stores.all[entity]
        instrumentation.trace("update", entity: store.layout.entity.name)
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        guard let old = try load(key, store) else { return false }
        try replace(old, with: values, key: key, in: store)
        return true
    }

    @_spi(PersistenceBackend) public func upsert(_ values: [Value], entity: Int) throws -> UpsertOutcome {
        let store = stores.all[entity]
        instrumentation.trace("upsert", entity: store.layout.entity.name)
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        guard let old = try load(key, store) else {
            try insert(values, into: store)
            return .inserted
        }
        let storedStamp = store.layout.stampIndex.map { old[$0] } ?? .null
        guard let written = store.layout.stampedValues(values, over: storedStamp) else { return .ignoredAsStale }
        try replace(old, with: written, key: key, in: store)
        return .updated
    }

    @_spi(PersistenceBackend) public func delete(key primaryKey: Value, entity: Int) throws -> Bool {
        let store = stores.all[entity]
        instrumentation.trace("delete by primary key", entity: store.layout.entity.name)
        let key = try recordKey(primaryKey, store)
        guard let old = try load(key, store) else { return false }
        try remove(old, key: key, from: store)
        return true
    }

    /// Whether the key is there: nothing to decrypt or decode (a foreign-key check on every write asks this).
    @_spi(PersistenceBackend) public func contains(key: Value, entity: Int) throws -> Bool {
        let store = stores.all[entity]
        return try transaction.get(store.dbi, try recordKey(key, store)) != nil
    }

    @_spi(PersistenceBackend) public func read(key: Value, entity: Int, into reader: RecordReader) throws
        -> StoredRecord
    {
        let store = stores.all[entity]
        instrumentation.trace("get by primary key", entity: store.layout.entity.name)
        let key = try recordKey(key, store)
        return try reader.refill({ try load(key, store, into: &$0) }) ? .filled : .absent
    }

    // MARK: - Queries

    /// Hands each selected record to `reader`; the context gives the array back (empties its own) before its
    /// block sees the entity, so the scan refills one array in place.
    @_spi(PersistenceBackend) public func scan(
        _ query: ResolvedQuery, entity: Int, reentrant: Bool, into reader: RecordReader,
        _ visit: ((any RecordRow)?) throws -> Void
    ) throws {
        let store = stores.all[entity]
        instrumentation.trace("query", entity: store.layout.entity.name)
        try visitSelected(query, store) { values in
            reader.refill { $0 = values }
            try visit(nil)
        }
    }

    @_spi(PersistenceBackend) public func scanValues(
        _ query: ResolvedQuery, entity: Int, attributes positions: [Int]?, _ visit: ([Value]) throws -> Void
    ) throws {
        let store = stores.all[entity]
        instrumentation.trace("query", entity: store.layout.entity.name)
        guard let positions else { return try visitSelected(query, store, visit) }
        var projected: [Value] = []
        projected.reserveCapacity(positions.count)
        try visitSelected(query, store) { values in
            projected.removeAll(keepingCapacity: true)
            for position in positions { projected.append(values[position]) }
            try visit(projected)
        }
    }

    @_spi(PersistenceBackend) public func count(_ condition: ResolvedCondition?, entity: Int) throws -> Int {
        let store = stores.all[entity]
        instrumentation.trace("count", entity: store.layout.entity.name)
        guard let condition else { return try transaction.count(store.dbi) }
        // Counted as the scan visits them, the condition tested on each record's stored bytes: nothing is collected,
        // and a matching record isn't decoded whole.
        var count = 0
        try visitMatching(condition, store, decodingMatches: false) { _, _ in
            count += 1
            return true
        }
        return count
    }

    @_spi(PersistenceBackend) public func delete(
        matching condition: ResolvedCondition?, entity: Int, deleted: ((Value) -> Void)?
    ) throws -> Int {
        let store = stores.all[entity]
        let primaryKey = store.layout.primaryKeyIndex
        instrumentation.trace("delete matching", entity: store.layout.entity.name)
        guard let condition else {
            if let deleted {
                // Read the keys before emptying (only when they are wanted).
                for record in try matching(nil, store) { deleted(record.values[primaryKey]) }
            }
            let count = try transaction.count(store.dbi)
            try transaction.empty(store.dbi)
            for index in store.indexes { try transaction.empty(index.dbi) }
            return count
        }
        let doomed = try matching(condition, store)
        for record in doomed {
            try cancellation?.check()
            try remove(record.values, key: record.key, from: store)
            deleted?(record.values[primaryKey])
        }
        return doomed.count
    }

    // MARK: - Savepoints

    /// A nested transaction: committed into the write when `body` returns, aborted when it throws.
    @_spi(PersistenceBackend) public func savepoint<R>(_ body: () throws -> R) throws -> R {
        let parent = transaction
        let nested = try Transaction(nestedIn: parent)
        transaction = nested
        do {
            let result = try body()
            transaction = parent
            try nested.commit()
            return result
        } catch {
            transaction = parent
            nested.abort()
            throw error
        }
    }
}

/// Raw access to what LMDB stores, in the context's transaction (tamper tests, verification).
extension StoreContext where Storage == LMDBStorage {
    /// The innermost open transaction.
    var transaction: Transaction { storage.transaction }

    /// The bytes stored for a record, as on disk (sealed when the store is encrypted).
    func storedBytes<E: Entity>(of type: E.Type, id: E.ID) throws -> Data? {
        let store = try storage.stores.store(for: E.self)
        return try storage.transaction.get(store.dbi, storage.recordKey(id.storedValue, store))
    }

    /// Overwrites the bytes stored for a record, bypassing sealing and indexes — to simulate tampering.
    func overwriteStoredBytes<E: Entity>(of type: E.Type, id: E.ID, with bytes: Data) throws {
        let store = try storage.stores.store(for: E.self)
        try storage.transaction.put(store.dbi, storage.recordKey(id.storedValue, store), bytes)
    }
}
