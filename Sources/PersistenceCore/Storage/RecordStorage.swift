import Foundation

/// One transaction's record-level storage: what a backend implements under the context users hold.
///
/// The context (``StoreContext``) is written once, here in the core: the typed operations, the checks that a context
/// is still usable and may write, record coders, foreign-key checks and delete rules, change recording and aliases.
/// It calls its storage for what only the engine knows — a record by its primary key, a resolved query's records,
/// counts and aggregates, savepoints — with records as arrays of ``Value``s in their ``RecordLayout``'s order and
/// entities named by their position in the model (`ModelGraph.layouts`).
///
/// A storage lives for one transaction and is used on one thread. It validates nothing the context validated (names,
/// types, whether the transaction may write) and records no change: the context does both. It throws typed
/// ``PersistenceError``s for what the engine refuses (``PersistenceError/Code/duplicateKey``,
/// ``PersistenceError/Code/uniqueViolation``, ``PersistenceError/Code/storageFull``…), having changed nothing.
///
/// The requirements are backend SPI: `@_spi(PersistenceBackend) import PersistenceCore` to implement them.
public protocol RecordStorage: AnyObject {
    /// Throws when the transaction can no longer be used for this — an engine that ended it after an error
    /// (SQLite's rollback on `SQLITE_FULL`; PostgreSQL's aborted transaction). The context has checked already
    /// that its block hasn't ended and that a write is in a write transaction.
    @_spi(PersistenceBackend) func checkUsable(writing: Bool) throws

    /// Inserts a record.
    /// - Throws: ``PersistenceError/Code/duplicateKey`` when its primary key is stored,
    ///   ``PersistenceError/Code/uniqueViolation`` for a unique index; nothing changed either way.
    @_spi(PersistenceBackend) func insert(_ values: [Value], entity: Int) throws

    /// Writes many records, many rows to a statement where the engine can: each row flagged in `exists` replaces the
    /// stored record with its primary key whole (no stamp rule), each other one is inserted. The rows' keys are
    /// distinct. The default inserts or updates one by one.
    /// - Throws: ``PersistenceError/Code/duplicateKey`` for a row to insert whose key is stored,
    ///   ``PersistenceError/Code/notFound`` for a row to replace whose key isn't,
    ///   ``PersistenceError/Code/uniqueViolation`` for a unique index. Rows before the refused one may be written:
    ///   the context runs it in a savepoint.
    @_spi(PersistenceBackend) func put(_ rows: [[Value]], exists: [Bool], entity: Int) throws

    /// Replaces the record with the primary key in `values`; `false` (and nothing changed) when there is none.
    /// - Throws: ``PersistenceError/Code/uniqueViolation`` for a unique index, nothing changed.
    @_spi(PersistenceBackend) func update(_ values: [Value], entity: Int) throws -> Bool

    /// Inserts the record, or replaces the stored one with its primary key unless the stored stamp is as new
    /// (`RecordLayout.stampedValues(_:over:)` decides, and what it returns is what is written).
    @_spi(PersistenceBackend) func upsert(_ values: [Value], entity: Int) throws -> UpsertOutcome

    /// Deletes the record whose primary key's stored value is `key`; whether there was one.
    @_spi(PersistenceBackend) func delete(key: Value, entity: Int) throws -> Bool

    /// Deletes the records matching `condition` (all when `nil`) and returns how many. When `deleted` is given it
    /// is called with each deleted record's primary key (change-set observers want them; only then are they read).
    @_spi(PersistenceBackend) func delete(
        matching condition: ResolvedCondition?, entity: Int, deleted: ((Value) -> Void)?
    ) throws -> Int

    /// Deletes the records whose primary keys' stored values are `keys` (each once) and returns how many there were;
    /// `deleted`, when given, is called with each deleted one's key. The default deletes them one by one; an SQL
    /// engine deletes many in one statement.
    @_spi(PersistenceBackend) func delete(keys: [Value], entity: Int, deleted: ((Value) -> Void)?) throws -> Int

    /// Whether a record has the primary key whose stored value is `key` (a foreign-key check on every write asks:
    /// nothing to decode).
    @_spi(PersistenceBackend) func contains(key: Value, entity: Int) throws -> Bool
    /// Whether foreign-key checks must keep what they find until the transaction ends
    /// (``lockReferenced(keys:entity:)``): a transaction whose isolation lets another writer delete a record it found
    /// before it commits, or lets a concurrent deletion miss the record that now refers to it. `false` by default:
    /// one writer at a time, or a serializable transaction, needs no more than a read.
    @_spi(PersistenceBackend) var locksReferences: Bool { get }
    /// Which of `keys` are primary keys of stored records of `entity`, for the foreign-key check of a write — each
    /// found kept until the transaction ends so that no concurrent deletion removes it, or misses the referring record
    /// this transaction writes. Called only when ``locksReferences``; the default reads (``contains(key:entity:)``).
    @_spi(PersistenceBackend) func lockReferenced(keys: [Value], entity: Int) throws -> Set<Value>

    /// Finds the record whose primary key's stored value is `key`: ``StoredRecord/absent`` when there is none;
    /// ``StoredRecord/row(_:)`` with the engine's row, which the context reads in place and then ends with
    /// `endRead()`; or ``StoredRecord/filled`` once the storage filled `reader`'s values (`RecordReader.refill(_:)`).
    @_spi(PersistenceBackend) func read(key: Value, entity: Int, into reader: RecordReader) throws -> StoredRecord

    /// Ends the read of the row that `read(key:entity:into:)` handed over (SQLite resets its statement); the
    /// default does nothing.
    @_spi(PersistenceBackend) func endRead()

    /// Calls `visit` for each record `query` selects, in its order and within its window: with the engine's row to
    /// read in place, or with `nil` once the storage has filled `reader`'s values.
    ///
    /// When `reentrant`, `visit` may use the transaction (`forEach`'s block may read, or change the record it was
    /// given); otherwise it only decodes (`recover`), and a server backend may stream the rows without leaving the
    /// connection free between them.
    @_spi(PersistenceBackend) func scan(
        _ query: ResolvedQuery, entity: Int, reentrant: Bool, into reader: RecordReader,
        _ visit: ((any RecordRow)?) throws -> Void
    ) throws

    /// Calls `visit` with the values of each record `query` selects, in its order: all of them in layout order, or
    /// those at `attributes`, in that order. `visit` must not change the store.
    @_spi(PersistenceBackend) func scanValues(
        _ query: ResolvedQuery, entity: Int, attributes: [Int]?, _ visit: ([Value]) throws -> Void
    ) throws

    /// The primary keys of the records of `entity` whose attribute at `foreignKey` — a reference to `entity` itself —
    /// names one of `keys`, or a record found so, at any depth, each once: what a cascade down a tree or a chain
    /// reaches. `nil` when the engine has no faster way than the context's walk, one lookup per level (the default).
    @_spi(PersistenceBackend) func referringClosure(to keys: [Value], entity: Int, foreignKey: Int) throws -> [Value]?

    /// How many records match `condition` (all when `nil`).
    @_spi(PersistenceBackend) func count(_ condition: ResolvedCondition?, entity: Int) throws -> Int

    /// The aggregate rows of a resolved query computed by the engine, or `nil` to let the context compute them in
    /// one pass over `scanValues(_:entity:attributes:_:)` (the default).
    @_spi(PersistenceBackend) func aggregate(_ query: ResolvedAggregateQuery, entity: Int) throws -> [AggregateRow]?

    /// Runs `body` so that what it changes is undone when it throws (`SAVEPOINT`, a nested transaction), and kept as
    /// part of the transaction when it returns; rethrows what `body` throws.
    @_spi(PersistenceBackend) func savepoint<R>(_ body: () throws -> R) throws -> R

    /// What the alias named `name` names, or `nil`.
    @_spi(PersistenceBackend) func aliasTarget(named name: String) throws -> AliasTarget?

    /// Stores (or, with `nil`, removes) what the alias named `name` names.
    @_spi(PersistenceBackend) func setAliasTarget(_ target: AliasTarget?, named name: String) throws

    // MARK: Full-text indexes (all defaulted: a storage that keeps none is searched by scanning its records)

    /// Whether the storage keeps full-text indexes (the rest of these requirements). `false` by default: the context
    /// then searches by reading every record of the entity, which gives the same answers slowly.
    @_spi(PersistenceBackend) var keepsFullTextIndexes: Bool { get }

    /// What the store holds of the full-text index `index` of the entity at `entity`: what it was built for and how
    /// far; `nil` when the store has no such index.
    @_spi(PersistenceBackend) func fullTextIndexState(_ index: FullTextIndexLayout, entity: Int) throws
        -> FullTextIndexState?

    /// Stores the index's state; with `emptying`, the index is first made (or emptied): it holds no record.
    @_spi(PersistenceBackend) func setFullTextIndexState(
        _ state: FullTextIndexState, index: FullTextIndexLayout, entity: Int, emptying: Bool
    ) throws

    /// The names (``FullTextIndexLayout/name``) of the full-text indexes the store holds, declared or not.
    @_spi(PersistenceBackend) func storedFullTextIndexes() throws -> Set<String>

    /// Drops the full-text index named `name` (no longer declared) and its state.
    @_spi(PersistenceBackend) func dropFullTextIndex(named name: String) throws

    /// Removes the records with `keys` from the index, then adds `documents` (whose keys are among `keys` or new to
    /// the index): a record's document replaces what the index held of it.
    @_spi(PersistenceBackend) func updateFullTextIndex(
        _ index: FullTextIndexLayout, entity: Int, removing keys: [Value], adding documents: [FullTextDocument]
    ) throws

    /// The counts of a plan's terms in the index (``FullTextMatches``), counted as ``FullTextMatching`` counts them.
    /// Called only on an index whose state is complete and built for its layout's fingerprint.
    @_spi(PersistenceBackend) func fullTextMatches(
        _ plan: FullTextPlan, index: FullTextIndexLayout, entity: Int
    ) throws -> FullTextMatches

    // MARK: Vectors (defaulted: the context ranks what `scanValues` reads)

    /// Calls `visit` with the primary key (at `key`) and the stored bytes of the attribute at `attribute` (a vector's, of
    /// `VectorLayout`) of each record `condition` selects, in any order, skipping records whose value there is
    /// `nil`, and whether those bytes outlast the call (`true`: valid until the storage is next asked to write or its
    /// transaction ends, and the context ranks them where they are; `false`: valid during the call only, and the
    /// context copies them). `visit` must not change the store. The default
    /// reads the two values through ``scanValues(_:entity:attributes:_:)``; an engine that can hand its stored bytes
    /// in place (SQLite's blob, LMDB's map) saves a copy a record, and one whose bytes last (LMDB's map, SQLite's
    /// copy in memory) saves the context's copy too.
    @_spi(PersistenceBackend) func scanVectors(
        at attribute: Int, key: Int, where condition: ResolvedCondition?, entity: Int,
        _ visit: (Value, UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws

    /// The keys and distances of the records nearest `distance`'s vector in the attribute at `attribute`, among
    /// those `condition` selects (`nil` values never), nearest first then by primary key, the first `offset` left
    /// out and at most `limit`: ranked by the engine itself, computing `VectorDistance`'s distances exactly — or
    /// `nil` (the default) for the context to rank what ``scanVectors(at:key:where:entity:_:)`` reads.
    @_spi(PersistenceBackend) func nearest(
        _ distance: VectorDistance, at attribute: Int, where condition: ResolvedCondition?, entity: Int,
        offset: Int, limit: Int?
    ) throws -> [(key: Value, distance: Double)]?

    /// The storage's last writes and checks before its transaction commits (a read's too); throwing rolls back.
    @_spi(PersistenceBackend) func prepareCommit() throws

    /// The transaction's block ended: what it used is noted (whether it commits or not).
    @_spi(PersistenceBackend) func expire()
}

/// What a storage's read of a record by its primary key found (``RecordStorage``).
@_spi(PersistenceBackend) public enum StoredRecord {
    /// No record has the key.
    case absent
    /// The engine's row, to read in place until the storage's `endRead()`.
    case row(any RecordRow)
    /// The storage filled the reader's values.
    case filled
}

extension RecordStorage {
    /// Nothing to end: the storage filled the reader, or its rows need no ending.
    @_spi(PersistenceBackend) public func endRead() {}

    /// One by one.
    @_spi(PersistenceBackend) public func delete(keys: [Value], entity: Int, deleted: ((Value) -> Void)?) throws
        -> Int
    {
        var count = 0
        for key in keys where try delete(key: key, entity: entity) {
            deleted?(key)
            count += 1
        }
        return count
    }

    /// One by one: inserted, or updated, as the flag says.
    @_spi(PersistenceBackend) public func put(_ rows: [[Value]], exists: [Bool], entity: Int) throws {
        for (row, stored) in zip(rows, exists) {
            guard stored else {
                try insert(row, entity: entity)
                continue
            }
            guard try update(row, entity: entity) else {
                throw PersistenceError(.notFound, "a record to replace isn't stored")
            }
        }
    }

    /// No engine aggregation: the context computes the rows in one pass over `scanValues(_:entity:attributes:_:)`.
    @_spi(PersistenceBackend) public func aggregate(_ query: ResolvedAggregateQuery, entity: Int) throws
        -> [AggregateRow]?
    { nil }

    /// No locks: one writer at a time, or a serializable transaction.
    @_spi(PersistenceBackend) public var locksReferences: Bool { false }

    /// Reads, one key at a time.
    @_spi(PersistenceBackend) public func lockReferenced(keys: [Value], entity: Int) throws -> Set<Value> {
        var found = Set<Value>()
        for key in keys where try contains(key: key, entity: entity) { found.insert(key) }
        return found
    }

    /// No full-text indexes: searches read every record.
    @_spi(PersistenceBackend) public var keepsFullTextIndexes: Bool { false }

    @_spi(PersistenceBackend) public func fullTextIndexState(_ index: FullTextIndexLayout, entity: Int) throws
        -> FullTextIndexState?
    { nil }

    @_spi(PersistenceBackend) public func setFullTextIndexState(
        _ state: FullTextIndexState, index: FullTextIndexLayout, entity: Int, emptying: Bool
    ) throws {
        throw PersistenceError(.unsupported, "this backend keeps no full-text indexes")
    }

    @_spi(PersistenceBackend) public func storedFullTextIndexes() throws -> Set<String> { [] }

    @_spi(PersistenceBackend) public func dropFullTextIndex(named name: String) throws {}

    @_spi(PersistenceBackend) public func updateFullTextIndex(
        _ index: FullTextIndexLayout, entity: Int, removing keys: [Value], adding documents: [FullTextDocument]
    ) throws {
        throw PersistenceError(.unsupported, "this backend keeps no full-text indexes")
    }

    @_spi(PersistenceBackend) public func fullTextMatches(
        _ plan: FullTextPlan, index: FullTextIndexLayout, entity: Int
    ) throws -> FullTextMatches {
        throw PersistenceError(.unsupported, "this backend keeps no full-text indexes")
    }

    @_spi(PersistenceBackend) public func scanVectors(
        at attribute: Int, key: Int, where condition: ResolvedCondition?, entity: Int,
        _ visit: (Value, UnsafeRawBufferPointer, Bool) throws -> Void
    ) throws {
        let query = ResolvedQuery.selecting(condition, key: key)
        try scanValues(query, entity: entity, attributes: [key, attribute]) { values in
            switch values[1] {
            case .null: return
            case .blob(let data): try data.withUnsafeBytes { try visit(values[0], $0, false) }
            // Not bytes: no vector of any dimension, which the context reports.
            default: try visit(values[0], UnsafeRawBufferPointer(start: nil, count: 0), false)
            }
        }
    }

    @_spi(PersistenceBackend) public func nearest(
        _ distance: VectorDistance, at attribute: Int, where condition: ResolvedCondition?, entity: Int,
        offset: Int, limit: Int?
    ) throws -> [(key: Value, distance: Double)]? { nil }

    /// No set-based lookup: the context walks a self-referring cascade level by level.
    @_spi(PersistenceBackend) public func referringClosure(to keys: [Value], entity: Int, foreignKey: Int) throws
        -> [Value]?
    { nil }
}
