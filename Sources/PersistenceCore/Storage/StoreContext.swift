/// The context of a transaction on any backend: the typed operations of ``DatabaseContext`` over the backend's
/// record-level ``RecordStorage``, written once.
///
/// Only reachable inside a `read` or `write` block; using it afterwards throws
/// ``PersistenceError/Code/contextExpired``, and a change in a read throws ``PersistenceError/Code/readOnly``. A
/// backend names its own (`SQLiteContext` is `StoreContext<SQLiteStorage>`) and adds its native access — raw SQL,
/// raw keys — in an extension constrained to its storage, in the same transaction.
///
/// What it does for every backend: looks the entity up in the model, encodes and decodes records with reused
/// coders, checks foreign keys and applies delete rules when the model declares relationships, records what a write
/// changed for observers, and applies stamps' rule to upserts (through the storage).
public final class StoreContext<Storage: RecordStorage>: DatabaseContext, RecordValueAccess, TransactionContext {
    /// The backend's storage in this transaction.
    @_spi(PersistenceBackend) public let storage: Storage
    /// The model's entities and relationships, resolved.
    @_spi(PersistenceBackend) public let graph: ModelGraph
    /// Whether it writes, the change recorder, instrumentation, cancellation.
    package let state: ContextState
    // Exclusivity is unchecked on the context's own state: a context is used on one thread, inside its transaction
    // block, and no access to these overlaps another; the dynamic checks cost more than the reads they guard.
    @exclusivity(unchecked) private var isExpired = false
    /// Record readers and writers, reused for every record of the transaction.
    @exclusivity(unchecked) var coders = RecordCoders()
    /// Whether the model declares relationships: writes check foreign keys and deletes apply rules only then, so a
    /// model without any pays one test of this flag per operation.
    private let hasRelationships: Bool

    package var recorder: ChangeRecorder? { state.recorder }

    /// Whether this context belongs to a write transaction.
    public var isWritable: Bool { state.isWritable }

    /// A context over `storage`, for a transaction that writes when it has a change `recorder`.
    @_spi(PersistenceBackend) public init(
        storage: Storage, graph: ModelGraph, recorder: ChangeRecorder?, instrumentation: Instrumentation
    ) {
        self.storage = storage
        self.graph = graph
        hasRelationships = !graph.isEmpty
        state = ContextState(recorder: recorder, instrumentation: instrumentation)
    }

    /// Ends the context's use: every later call throws ``PersistenceError/Code/contextExpired``.
    @_spi(PersistenceBackend) public func expire() {
        isExpired = true
        storage.expire()
    }

    /// The storage's last writes and checks before the transaction commits.
    @_spi(PersistenceBackend) public func prepareCommit() throws { try storage.prepareCommit() }

    /// Checks that the context may be used (and may write, when `writing`).
    @inline(__always)
    package func use(writing: Bool) throws {
        guard !isExpired, !writing || state.isWritable else {
            throw state.refusal(writing: writing, expired: isExpired)
        }
        try storage.checkUsable(writing: writing)
    }

    /// The position of an entity type in the model.
    @inline(__always)
    @usableFromInline
    func position<E: Entity>(of type: E.Type) throws -> Int { try graph.positions.position(of: type) }

    // MARK: - Typed operations

    public func create<E: Entity>(_ entity: E) throws {
        try annotated("insert", E.self) {
            try use(writing: true)
            let position = try position(of: E.self)
            let layout = graph.layouts[position]
            try insert(encoded(entity, coders.writer(for: layout)), position, layout)
        }
    }

    public func create<E: Entity, S: Sequence<E>>(_ entities: S) throws {
        try annotated("insert", E.self) {
            try use(writing: true)
            let position = try position(of: E.self)
            let layout = graph.layouts[position]
            let writer = coders.writer(for: layout)
            for entity in entities {
                try state.cancellation?.check()
                try insert(encoded(entity, writer), position, layout)
            }
        }
    }

    /// An entity's values, about to be written: encoded, and its foreign keys checked.
    @inline(__always)
    private func encoded<E: Entity>(_ entity: E, _ writer: RecordWriter) throws -> [Value] {
        let values = try writer.encode(entity)
        if hasRelationships { try checkReferences(values, of: E.self) }
        return values
    }

    @inline(__always)
    private func insert(_ values: [Value], _ position: Int, _ layout: RecordLayout) throws {
        try storage.insert(values, entity: position)
        state.recorder?.record(.insert, layout, key: values[layout.primaryKeyIndex])
    }

    public func update<E: Entity>(_ entity: E) throws {
        try annotated("update", E.self) {
            try use(writing: true)
            let position = try position(of: E.self)
            let layout = graph.layouts[position]
            let values = try encoded(entity, coders.writer(for: layout))
            guard try storage.update(values, entity: position) else {
                throw PersistenceError(.notFound, "no \(layout.entity.name) has that primary key")
            }
            state.recorder?.record(.update, layout, key: values[layout.primaryKeyIndex])
        }
    }

    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome {
        var outcome = UpsertOutcome.inserted
        try annotated("upsert", E.self) {
            try use(writing: true)
            let position = try position(of: E.self)
            let layout = graph.layouts[position]
            let values = try encoded(entity, coders.writer(for: layout))
            outcome = try storage.upsert(values, entity: position)
            switch outcome {
            case .inserted: state.recorder?.record(.insert, layout, key: values[layout.primaryKeyIndex])
            case .updated: state.recorder?.record(.update, layout, key: values[layout.primaryKeyIndex])
            case .ignoredAsStale: break
            }
        }
        return outcome
    }

    public func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? {
        try use(writing: false)
        let position = try position(of: E.self)
        let reader = coders.reader(for: graph.layouts[position])
        // No closure, nothing generic in the storage's call: through them, unspecialized code looked up the
        // optional entity's metadata and copied the entity on every read.
        switch try storage.read(key: id.storedValue, entity: position, into: reader) {
        case .absent:
            return nil
        case .row(let row):
            defer { storage.endRead() }
            return try reader.decode(E.self, in: row)
        case .filled:
            // The storage refills the reader's own array in place next time: it stays.
            return try reader.decode(E.self)
        }
    }

    // Inlinable so the array is of the app's own entity type: built in generic code, each append looked up the
    // array's type metadata (about 300 instructions a record).
    @inlinable
    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        var entities: [E] = []
        try forEachDecoded(type, query: query, reentrant: false) { (entity: consuming E) in entities.append(entity) }
        return entities
    }

    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        try forEachDecoded(type, query: query, reentrant: true) { try body($0) }
    }

    /// ``forEach(_:query:_:)`` handing each entity over to `body`: an array appends it without a copy. `reentrant`
    /// when `body` may use the context.
    @usableFromInline
    func forEachDecoded<E: Entity>(
        _ type: E.Type, query: Query, reentrant: Bool, _ body: (consuming E) throws -> Void
    ) throws {
        try use(writing: false)
        if query.search != nil { return try forEachSearched(type, query: query, body) }
        if query.nearest != nil { return try forEachNearest(type, query: query, body) }
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        let resolved = try query.resolve(in: layout, graph: graph)
        let reader = coders.reader(for: layout)
        let cancellation = state.cancellation
        // The decoded entity goes straight into `body`: held in a local first, unspecialized code copied and
        // destroyed it (about 200 instructions a record).
        try storage.scan(resolved, entity: position, reentrant: reentrant, into: reader) { row in
            try cancellation?.check()
            if let row {
                try body(reader.decode(E.self, in: row))
            } else {
                try body(Self.decodeFilled(E.self, reader))
            }
        }
    }

    /// Decodes an entity from the values the storage filled `reader` with, and hands the storage its array back
    /// before the entity goes on: it refills it in place for the next record.
    @inline(__always)
    static func decodeFilled<E: Entity>(_ type: E.Type, _ reader: RecordReader) throws -> E {
        defer { reader.refill { $0 = [] } }
        return try reader.decode(E.self)
    }

    public func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: false)
        let position = try position(of: E.self)
        let resolved = try condition?.resolve(in: graph.layouts[position], graph: graph)
        return try storage.count(resolved, entity: position)
    }

    public func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow] {
        try use(writing: false)
        let position = try position(of: E.self)
        let resolved = try ResolvedAggregateQuery(query, in: graph.layouts[position], graph: graph)
        // A lone count of records is a count.
        if resolved.groups.isEmpty, resolved.having == nil, resolved.columns.count == 1,
            let only = resolved.columns.first, only.function == .count, only.position == nil
        {
            let count = try storage.count(resolved.resolvedCondition, entity: position)
            return [AggregateRow(names: resolved.names, values: [.integer(Int64(count))])]
        }
        if let rows = try storage.aggregate(resolved, entity: position) { return rows }
        return try aggregateByScanning(type, resolved)
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        guard hasRelationships else { return try deleteRecord(type, key: id.storedValue) }
        return try deleteRecordFollowingRules(type, key: id.storedValue)
    }

    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        if hasRelationships, try hasDeleteRules(type) { return try deleteFollowingRules(type, where: condition) }
        return try deleteRecords(type, where: condition)
    }

    @discardableResult
    public func deleteReporting<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> DeletionReport {
        try use(writing: true)
        return try deleteReportingRules(type, where: condition)
    }

    // MARK: - Savepoints

    @discardableResult
    public func savepoint<R>(_ body: () throws -> R) throws -> R {
        try use(writing: true)
        // What came before is taken into the full-text indexes outside the savepoint: a rollback undoes only what
        // was taken in it, and the recorder gives that again.
        try updateFullTextIndexes()
        let mark = state.recorder?.mark()
        do {
            return try storage.savepoint(body)
        } catch {
            if let mark { state.recorder?.rollBack(to: mark) }
            throw error
        }
    }

    // MARK: - Aliases

    @_spi(PersistenceBackend) public func aliasTarget(named name: String) throws -> AliasTarget? {
        try use(writing: false)
        return try storage.aliasTarget(named: name)
    }

    @_spi(PersistenceBackend) public func setAliasTarget(_ target: AliasTarget?, named name: String) throws {
        try use(writing: true)
        try storage.setAliasTarget(target, named: name)
        state.recorder?.recordAlias(name)
    }

    // MARK: - Errors

    /// Names the operation and entity in an engine error (whose message may only say a statement failed), unless the
    /// storage named them already.
    @inline(__always)
    private func annotated<E: Entity>(_ operation: String, _ type: E.Type, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch var error as PersistenceError
            where error.nativeCode != nil && !error.message.contains("'\(E.entityName)'")
        {
            error.message = "could not \(operation) a '\(E.entityName)' record: \(error.message)"
            throw error
        }
    }
}

/// The record-level access the core builds relationships, reconcile and projections on.
extension StoreContext {
    package func requireWritable() throws { try use(writing: true) }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, _ body: ([Value]) throws -> Void
    ) throws {
        try scanValues(type, query: query, attributes: nil, body)
    }

    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, attributes positions: [Int], _ body: ([Value]) throws -> Void
    ) throws {
        try scanValues(type, query: query, attributes: positions, body)
    }

    private func scanValues<E: Entity>(
        _ type: E.Type, query: Query, attributes: [Int]?, _ body: ([Value]) throws -> Void
    ) throws {
        try use(writing: false)
        let position = try position(of: E.self)
        let resolved = try query.resolve(in: graph.layouts[position], graph: graph)
        let cancellation = state.cancellation
        try storage.scanValues(resolved, entity: position, attributes: attributes) { values in
            try cancellation?.check()
            try body(values)
        }
    }

    package func referringClosure<E: Entity>(_ type: E.Type, to keys: [Value], foreignKey: Int) throws -> [Value]? {
        try use(writing: false)
        return try storage.referringClosure(to: keys, entity: position(of: E.self), foreignKey: foreignKey)
    }

    package func containsRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        try use(writing: false)
        return try storage.contains(key: key, entity: position(of: E.self))
    }

    package var locksReferences: Bool { storage.locksReferences }

    package func lockReferenced<E: Entity>(_ type: E.Type, keys: [Value]) throws -> Set<Value> {
        try use(writing: true)
        return try storage.lockReferenced(keys: keys, entity: position(of: E.self))
    }

    package func replaceRecord<E: Entity>(_ type: E.Type, values: [Value]) throws {
        try use(writing: true)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        guard try storage.update(values, entity: position) else {
            throw PersistenceError(.notFound, "no \(layout.entity.name) has that primary key")
        }
        state.recorder?.record(.update, layout, key: values[layout.primaryKeyIndex])
    }

    package func deleteRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        try use(writing: true)
        let position = try position(of: E.self)
        guard try storage.delete(key: key, entity: position) else { return false }
        state.recorder?.record(.delete, graph.layouts[position], key: key)
        return true
    }

    package func deleteRecords<E: Entity>(_ type: E.Type, keys: [Value]) throws -> Int {
        try use(writing: true)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        guard let recorder = state.recorder, recorder.recordsKeys else {
            let count = try storage.delete(keys: keys, entity: position, deleted: nil)
            if count > 0 { state.recorder?.recordUntracked(layout) }
            return count
        }
        return try storage.delete(keys: keys, entity: position) { key in recorder.record(.delete, layout, key: key) }
    }

    package func deleteRecords<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        try use(writing: true)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        let resolved = try condition?.resolve(in: layout, graph: graph)
        guard let recorder = state.recorder, recorder.recordsKeys else {
            let count = try storage.delete(matching: resolved, entity: position, deleted: nil)
            if count > 0 { state.recorder?.recordUntracked(layout) }
            return count
        }
        // Change-set observers want each deleted key.
        return try storage.delete(matching: resolved, entity: position) { key in
            recorder.record(.delete, layout, key: key)
        }
    }
}
