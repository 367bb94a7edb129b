internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// How an ``LMDBStorage`` stores records and their index entries, and finds the records a query selects.
extension LMDBStorage {
    /// The key bytes of a primary-key value, checked against LMDB's key size limit.
    func recordKey(_ value: Value, _ store: EntityStore) throws -> Data {
        try KeyCodec.recordKey(
            value, of: store.layout.entity.name, maximumSize: transaction.environment.maximumKeySize)
    }

    func load(_ key: Data, _ store: EntityStore) throws -> [Value]? {
        try transaction.withValue(store.dbi, key) { stored in
            try key.withUnsafeBytes { try opened(stored, store, key: $0) }
        }
    }

    /// Reads a record's values into `values` (keeping its storage); `false` when there is no such record.
    func load(_ key: Data, _ store: EntityStore, into values: inout [Value]) throws -> Bool {
        let found: Void? = try transaction.withValue(store.dbi, key) { stored in
            try key.withUnsafeBytes { try open(stored, store, key: $0, into: &values) }
        }
        return found != nil
    }

    /// A record's values from its stored bytes into `values`, keeping its storage; a record that fails
    /// authentication is logged and counted.
    func open(
        _ stored: UnsafeRawBufferPointer, _ store: EntityStore, key: UnsafeRawBufferPointer, into values: inout [Value]
    ) throws {
        do {
            try sealer.open(stored, entity: store, key: key, into: &values)
            _ = try checked(values, store)
        } catch let error as PersistenceError {
            throw failure(error, of: store, key: key)
        }
    }

    /// ``open(_:_:key:into:)`` for a scan with a condition: whether the record matches `condition`, its values in
    /// `values` when it does (see `ValueSealer.open(_:entity:key:probing:_:into:)`).
    func open(
        _ stored: UnsafeRawBufferPointer, _ store: EntityStore, key: UnsafeRawBufferPointer,
        probing probe: inout StoredProbe, _ condition: ResolvedCondition, into values: inout [Value]
    ) throws -> Bool {
        do {
            let matched = try sealer.open(stored, entity: store, key: key, probing: &probe, condition, into: &values)
            if matched && probe.decodesMatches { _ = try checked(values, store) }
            return matched
        } catch let error as PersistenceError {
            throw failure(error, of: store, key: key)
        }
    }

    /// What reading a stored record that failed throws: a failed authentication is logged and counted; a storage
    /// that names keys in errors (the store tool's) says which record, by its primary key.
    func failure(_ error: PersistenceError, of store: EntityStore, key: UnsafeRawBufferPointer) -> PersistenceError {
        let entity = store.layout.entity.name
        let failedAuthentication = error.code == .authenticationFailed
        if failedAuthentication { instrumentation.authenticationFailed(passphrase: false, entity: entity) }
        guard namesKeysInErrors else { return error }
        let type = store.layout.types[store.layout.primaryKeyIndex]
        let record =
            "the '\(entity)' record "
            + (LMDBVerifier.keyText(Data(key), type).map { "with primary key \($0)" } ?? "with an unreadable key")
        return failedAuthentication
            ? PersistenceError(
                .authenticationFailed, record + " fails authentication: it was altered or moved", underlyingError: error
            )
            : PersistenceError(.corrupt, record + " can't be read: the store is damaged", underlyingError: error)
    }

    /// A record's values from its stored bytes, in a new array (see ``open(_:_:key:into:)``).
    func opened(_ stored: UnsafeRawBufferPointer, _ store: EntityStore, key: UnsafeRawBufferPointer) throws
        -> [Value]
    {
        var values: [Value] = []
        try open(stored, store, key: key, into: &values)
        return values
    }

    func checked(_ values: [Value], _ store: EntityStore) throws -> [Value] {
        guard values.count == store.layout.names.count else {
            throw PersistenceError(.corrupt, "a stored '\(store.layout.entity.name)' record has the wrong shape")
        }
        return values
    }

    /// Stores a record's sealed bytes at `key`; `false` when `flags` has `MDB_NOOVERWRITE` and the key exists.
    @discardableResult
    func putRecord(_ values: [Value], key: Data, _ store: EntityStore, flags: Int32 = 0) throws -> Bool {
        let write = { (sealed: UnsafeRawBufferPointer) in
            try self.transaction.put(store.dbi, key, bytes: sealed, flags: flags)
        }
        return try sealer.withSealed(values, entity: store, key: key, nonce: nextNonce, write)
    }

    /// The next nonce of this write, continuing from the counter the meta database holds.
    func nextNonce() throws -> Nonce {
        var sequence =
            try nonces
            ?? NonceSequence(
                startingAt: transaction.environment.nonceStart(
                    persisted: StoreMetadata.requiredNumber(.nonceCounter, metaDBI, transaction)))
        defer { nonces = sequence }
        return try sequence.next()
    }

    /// The index key of a record in `index`, or `nil` when an indexed value is `nil` (such records aren't
    /// indexed: `nil`s never collide in unique indexes, and lookups by `nil` scan).
    func indexKey(_ values: [Value], _ index: EntityStore.IndexStore) -> Data? {
        sealer.indexKey(of: values, in: index)
    }

    func insert(_ values: [Value], into store: EntityStore) throws {
        let key = try recordKey(values[store.layout.primaryKeyIndex], store)
        try checkUnique(values, key: key, store)
        guard try putRecord(values, key: key, store, flags: MDB_NOOVERWRITE) else {
            throw PersistenceError(.duplicateKey, "a '\(store.layout.entity.name)' record has that primary key")
        }
        try addIndexes(values, key: key, store)
    }

    func replace(_ old: [Value], with values: [Value], key: Data, in store: EntityStore) throws {
        try checkUnique(values, key: key, store)
        try removeIndexes(old, key: key, store)
        try putRecord(values, key: key, store)
        try addIndexes(values, key: key, store)
    }

    func remove(_ old: [Value], key: Data, from store: EntityStore) throws {
        try removeIndexes(old, key: key, store)
        try transaction.delete(store.dbi, key)
    }

    /// Refuses values a unique index already holds for another record — before anything is written, so a refused
    /// change leaves the store as it was.
    func checkUnique(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes where index.index.isUnique {
            guard let indexKey = indexKey(values, index), let owner = try transaction.get(index.dbi, indexKey),
                owner != key
            else { continue }
            // The entry must name a record that holds those values; one that doesn't is damage, not a violation.
            guard let ownerValues = try load(owner, store), self.indexKey(ownerValues, index) == indexKey else {
                throw damagedIndex(index, of: store, key: owner, "files a record under values it doesn't hold")
            }
            throw PersistenceError(
                .uniqueViolation,
                "a '\(store.layout.entity.name)' record already has those values in "
                    + index.index.attributes.joined(separator: ", "))
        }
    }

    func addIndexes(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes {
            _ = try sealer.withIndexKey(of: values, in: index) { indexKey in
                try key.withUnsafeBytes { try transaction.put(index.dbi, keyBytes: indexKey, bytes: $0) }
            }
        }
    }

    /// Removes a stored record's index entries. Each must be there, naming the record: an entry that is missing, or
    /// (unique) names another record, is damage — said as `corrupt`, never a write that leaves another record's
    /// entry gone or a stale one behind.
    func removeIndexes(_ values: [Value], key: Data, _ store: EntityStore) throws {
        for index in store.indexes {
            guard let indexKey = indexKey(values, index) else { continue }
            let removed: Bool
            if index.index.isUnique {
                // LMDB ignores the value when deleting from a database without duplicates: check the owner first.
                removed = try transaction.get(index.dbi, indexKey) == key && transaction.delete(index.dbi, indexKey)
            } else {
                removed = try transaction.delete(index.dbi, indexKey, value: key)
            }
            guard removed else { throw damagedIndex(index, of: store, key: key, "has no entry for a record it holds") }
        }
    }

    // MARK: Queries

    /// Calls `visit` with the values of each record a query selects, in its order and within its window.
    ///
    /// Records come in key order, and keys are encoded so that key order is primary-key order: in the default
    /// order the records stream, one at a time. Any other order needs them all, to sort.
    func visitSelected(_ query: ResolvedQuery, _ store: EntityStore, _ visit: ([Value]) throws -> Void)
        throws
    {
        // A limit per value counts records per value in the query's order: over all of them, then windowed.
        guard query.isPrimaryKeyOrder, query.limitPerValue == nil else {
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
    func matching(_ condition: ResolvedCondition?, _ store: EntityStore) throws -> [(
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
    /// Unless `decodingMatches`, a record a scan tested on its stored bytes reaches `visit` without its values (a
    /// count needs only that it matches).
    func visitMatching(
        _ condition: ResolvedCondition?, _ store: EntityStore, decodingMatches: Bool = true,
        _ visit: (UnsafeRawBufferPointer, [Value]) throws -> Bool
    ) throws {
        if let condition, condition.isRelated {
            return try visitMatching(answeringRelated(condition), store, decodingMatches: decodingMatches, visit)
        }
        if let condition, try visitByKeys(condition, store, visit) { return }
        // One array for the whole scan, refilled in place while no visitor keeps it (see `LMDBStorage.scan`).
        var values: [Value] = []
        guard let condition else {
            return try transaction.forEach(store.dbi) { key, stored in
                try cancellation?.check()
                try open(stored, store, key: key, into: &values)
                return try visit(key, values)
            }
        }
        // The condition is tested on the attributes it reads, decoded alone from each record's bytes (decrypted
        // once); only the records it keeps are decoded whole. A lower bound on the primary key starts the scan at
        // it: records before it can't match.
        var probe = StoredProbe(condition, attributes: store.layout.names.count, decodesMatches: decodingMatches)
        let scan = { (key: UnsafeRawBufferPointer, stored: UnsafeRawBufferPointer) throws -> Bool in
            try self.cancellation?.check()
            guard try self.open(stored, store, key: key, probing: &probe, condition, into: &values) else {
                return true
            }
            return try visit(key, values)
        }
        guard let start = lowerBound(condition, store) else { return try transaction.forEach(store.dbi, scan) }
        try transaction.forEach(store.dbi, from: start, scan)
    }

    /// Calls `visit` as ``visitMatching(_:_:decodingMatches:_:)`` does with the records a condition on the primary
    /// key names, or that an index finds, read by key — `true` — or does nothing and returns `false` when the
    /// condition is neither (a scan must answer it). The condition is unrelated (see `answeringRelated`).
    func visitByKeys(
        _ condition: ResolvedCondition, _ store: EntityStore, _ visit: (UnsafeRawBufferPointer, [Value]) throws -> Bool
    ) throws -> Bool {
        if let keys = primaryKeys(condition, store) {
            for key in keys {
                try cancellation?.check()
                guard let values = try load(key, store), condition.matches(values) else { continue }
                guard try key.withUnsafeBytes({ try visit($0, values) }) else { return true }
            }
            return true
        }
        if let answer = try candidates(condition, store) {
            for (key, filed) in answer.keys.sorted(by: { $0.key.precedesBytewise($1.key) }) {
                try cancellation?.check()
                // In a sound store every key an index holds names a record whose indexed value is the one it is
                // filed under: anything else is damage, said as such — never a record quietly left out.
                guard let values = try load(key, store) else {
                    throw damagedIndex(answer.index, of: store, key: key, "names no record")
                }
                guard ResolvedCondition.comparison(answer.position, .equal, filed).matches(values) else {
                    throw damagedIndex(answer.index, of: store, key: key, "files a record under values it doesn't hold")
                }
                // The rest of a compound condition may legitimately not hold.
                guard answer.isWhole || condition.matches(values) else { continue }
                guard try key.withUnsafeBytes({ try visit($0, values) }) else { return true }
            }
            return true
        }
        return false
    }

    /// The record key a condition's lower bound on the primary key (`>` or `>=` a value of the key's storage class,
    /// alone or in an `and`) starts at; `nil` when there is none. Key bytes sort as the values do.
    func lowerBound(_ condition: ResolvedCondition, _ store: EntityStore) -> Data? {
        let position = store.layout.primaryKeyIndex
        switch condition {
        case .comparison(let at, .greater, let value), .comparison(let at, .greaterOrEqual, let value):
            guard at == position, value.storageClass == store.layout.types[position].storageClass else { return nil }
            return try? recordKey(value, store)
        case .and(let conditions):
            return conditions.lazy.compactMap { self.lowerBound($0, store) }.max { $0.precedesBytewise($1) }
        default:
            return nil
        }
    }

    /// The condition with each condition on related records answered by one pass over the related entity's
    /// matching records (through an index where one answers their condition), counting them per linked value (the
    /// core's `answeringRelated(visitingMatching:)`).
    func answeringRelated(_ condition: ResolvedCondition) throws -> ResolvedCondition {
        try condition.answeringRelated { target, related, visit in
            try visitMatching(related, stores.all[target]) { _, values in
                try visit(values)
                return true
            }
        }
    }

    /// What an index answered of a condition: the primary keys it holds for the looked-up values, each with the
    /// value it is filed under, and whether that answers the whole condition. Every record it names must hold the
    /// value it is filed under; the rest of a compound condition may not hold.
    struct IndexAnswer {
        let keys: [Data: Value]
        /// The indexed attribute's position.
        let position: Int
        let index: EntityStore.IndexStore
        var isWhole = true
    }

    /// The record keys a condition on the primary key names — equal to a value, or one of a list, alone or in an
    /// `and` — in the store's order, each once: the records are read by key, not found by a scan. `nil` when the
    /// condition doesn't name keys so (or names one of another storage class, which compares numerically). A value
    /// no key can be (too large for LMDB) names no record.
    func primaryKeys(_ condition: ResolvedCondition, _ store: EntityStore) -> [Data]? {
        let position = store.layout.primaryKeyIndex
        let values: [Value]
        switch condition {
        case .comparison(let at, .equal, let value) where at == position: values = [value]
        case .oneOf(let at, let list) where at == position: values = list
        case .and(let conditions): return conditions.lazy.compactMap { self.primaryKeys($0, store) }.first
        default: return nil
        }
        let storage = store.layout.types[position].storageClass
        guard values.allSatisfy({ $0.storageClass == storage }) else { return nil }
        return Set(values.compactMap { try? recordKey($0, store) }).sorted { $0.precedesBytewise($1) }
    }

    /// Primary keys an index narrows `condition` to, or `nil` when no index applies (then the caller scans).
    func candidates(_ condition: ResolvedCondition, _ store: EntityStore) throws -> IndexAnswer? {
        switch condition {
        case .comparison(let at, .equal, let value):
            return try lookup([value], at: at, store).map { IndexAnswer(keys: $0.keys, position: at, index: $0.index) }
        case .oneOf(let at, let values):
            return try lookup(values, at: at, store).map { IndexAnswer(keys: $0.keys, position: at, index: $0.index) }
        case .relatedCounts(let at, let counts):
            // Only values with related records satisfy it: the foreign key's index finds their records.
            guard let values = counts.satisfyingValues else { return nil }
            return try lookup(values, at: at, store).map { IndexAnswer(keys: $0.keys, position: at, index: $0.index) }
        case .and(let conditions):
            for condition in conditions {
                if var answer = try candidates(condition, store) {
                    answer.isWhole = conditions.count == 1 && answer.isWhole
                    return answer
                }
            }
            return nil
        default:
            return nil
        }
    }

    /// Keys of records whose attribute at `at` equals one of `values`, through its index; `nil` when there is no
    /// index or a value can't be looked up exactly (`nil`, or another storage class that compares numerically).
    func lookup(_ values: [Value], at position: Int, _ store: EntityStore) throws
        -> (keys: [Data: Value], index: EntityStore.IndexStore)?
    {
        guard let index = store.index(on: position) else { return nil }
        let storage = store.layout.types[position].storageClass
        guard values.allSatisfy({ $0.storageClass == storage }) else { return nil }
        var keys: [Data: Value] = [:]
        for value in values {
            let indexKey = sealer.indexKey([value])
            if index.index.isUnique {
                // Not a sorted-duplicates database: MDB_NEXT_DUP would step on to the next key.
                if let key = try transaction.get(index.dbi, indexKey) { keys[key] = value }
            } else {
                for key in try transaction.duplicates(index.dbi, indexKey) { keys[key] = value }
            }
        }
        return (keys, index)
    }

    /// The `corrupt` error for an index entry that can't be right: it names the entity, the index and the primary key
    /// the entry holds (the key is stored in the clear; no attribute value is named).
    func damagedIndex(_ index: EntityStore.IndexStore, of store: EntityStore, key: Data, _ what: String)
        -> PersistenceError
    {
        let entity = store.layout.entity.name
        let primaryKey = LMDBVerifier.keyText(key, store.layout.types[store.layout.primaryKeyIndex]) ?? "(unreadable)"
        return PersistenceError(
            .corrupt,
            "the index '\(index.index.name(in: entity))' of '\(entity)' \(what) (primary key \(primaryKey)); the store "
                + "is damaged: verify() lists every damaged entry")
    }
}

extension Data {
    /// Whether these bytes sort before `other`'s as LMDB orders keys (`memcmp`, then the shorter first): the
    /// order records are visited in. Faster than `lexicographicallyPrecedes`, which steps an iterator per byte.
    func precedesBytewise(_ other: Data) -> Bool {
        withUnsafeBytes { lhs in
            other.withUnsafeBytes { rhs in
                let shared = Swift.min(lhs.count, rhs.count)
                guard shared > 0, let left = lhs.baseAddress, let right = rhs.baseAddress else {
                    return lhs.count < rhs.count
                }
                let order = memcmp(left, right, shared)
                return order != 0 ? order < 0 : lhs.count < rhs.count
            }
        }
    }
}
