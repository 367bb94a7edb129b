/// The typed operations available inside one transaction.
///
/// A context exists only inside a `read(_:)` or `write(_:)` block; using it after the block
/// returns throws ``PersistenceError/Code/contextExpired``. Mutations in a read block throw
/// ``PersistenceError/Code/readOnly``.
///
/// Backends implement the requirements; everything else (recover by `key:value:`, delete an object, delete all…)
/// is an extension built on them. A backend's own context type adds its native access — raw SQL for SQLite, raw
/// keys for LMDB — in the same transaction.
public protocol DatabaseContext {
    /// Inserts a new record.
    /// - Throws: ``PersistenceError/Code/duplicateKey`` when the primary key exists, with nothing changed;
    ///   ``PersistenceError/Code/uniqueViolation`` for a unique index.
    func create<E: Entity>(_ entity: E) throws

    /// Inserts many new records; stops at the first failure (the enclosing write then rolls back when it throws).
    func create<E: Entity, S: Sequence<E>>(_ entities: S) throws

    /// The records matching a query, ordered by its sort keys then by primary key.
    func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E]

    /// Calls `body` with each record matching a query, in the query's order, one record at a time.
    ///
    /// Unlike ``recover(_:query:)`` it builds no array: a backend decodes each record just before `body` sees it,
    /// so iterating a large table holds one record in memory, not all of them. A query sorted by anything but
    /// the primary key still has to sort, and that needs every matching record at once.
    ///
    /// Stop early by throwing from `body`; the error comes out of `forEach` unchanged. The context may be used
    /// inside `body` (to update the record just read, say); changing records the iteration hasn't reached yet
    /// has backend-specific effects on what it sees next.
    ///
    /// The default implementation calls ``recover(_:query:)``; backends replace it with a streaming one.
    func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws

    /// The records a query with a full-text search (``Query/search``) selects, in its order and window, each with its
    /// relevance and what the search matched in its text (``SearchHit``).
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a query without a search, or one naming no full-text
    ///   index of the entity; what ``recover(_:query:)`` throws.
    func search<E: Entity>(_ type: E.Type, _ query: Query) throws -> [SearchHit<E>]

    /// The records a query with nearest neighbours (``Query/nearest``) selects, nearest first, each with its
    /// distance (``Neighbour``).
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a query without nearest neighbours, or a vector
    ///   the attribute can't be compared with; what ``recover(_:query:)`` throws.
    func nearest<E: Entity>(_ type: E.Type, _ query: Query) throws -> [Neighbour<E>]

    /// The record with this primary key, or `nil`.
    func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E?

    /// How many records match the condition (all when `nil`).
    func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int

    /// Aggregates — counts, sums, extremes, averages — over the records matching the query's condition, alone or
    /// per group, computed by the backend (in SQL, or in one streaming pass); see ``AggregateQuery`` and
    /// ``Aggregate`` for the semantics, the same on every backend.
    /// - Throws: ``PersistenceError/Code/unknownAttribute``, ``PersistenceError/Code/typeMismatch`` or
    ///   ``PersistenceError/Code/invalidArgument`` for a query that doesn't fit the entity, before reading;
    ///   ``PersistenceError/Code/invalidValue`` when an integer sum leaves `Int64`.
    func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow]

    /// Replaces the stored record that has the entity's primary key.
    /// - Throws: ``PersistenceError/Code/notFound`` when there is none.
    func update<E: Entity>(_ entity: E) throws

    /// Inserts the record, or replaces the one with the same primary key.
    ///
    /// When the entity declares a stamp (``Entity/stampAttribute``), a stored record whose stamp is as new as the
    /// entity's or newer is kept and the upsert reports ``UpsertOutcome/ignoredAsStale`` — stale data never
    /// overwrites fresher data, and it isn't an error. An entity whose stamp is `nil` replaces the record but keeps
    /// the stored stamp.
    @discardableResult
    func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome

    /// Runs `body` in a savepoint: when it throws, what it changed is rolled back and the error rethrown, and the
    /// enclosing write goes on as if `body` had never run; when it returns, its changes stay part of the write.
    ///
    /// Savepoints nest to any depth. They belong to the enclosing write: a change a savepoint kept still rolls
    /// back when the write does. (SQLite and PostgreSQL: `SAVEPOINT`; LMDB: a nested transaction.)
    ///
    /// ```swift
    /// try db.write { context in
    ///     try context.create(order)
    ///     do {
    ///         try context.savepoint { try context.create(Coupon(id: 7, orderID: order.id)) }
    ///     } catch let error as PersistenceError where error.code == .duplicateKey {
    ///         // the coupon was used already: the order is still created
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: What `body` throws; ``PersistenceError/Code/readOnly`` in a read.
    @discardableResult
    func savepoint<R>(_ body: () throws -> R) throws -> R

    /// Deletes the record with this primary key; returns whether there was one.
    @discardableResult
    func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool

    /// Deletes the records matching the condition (all when `nil`); returns how many of `type` (what delete rules
    /// cascaded to is counted by ``deleteReporting(_:where:)``).
    @discardableResult
    func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int

    /// Deletes the records matching the condition (all when `nil`), as ``delete(_:where:)`` does, and reports
    /// everything the delete changed per entity: the records of `type`, those its delete rules cascaded to, and
    /// those a `nullify` rule left with a `nil` reference.
    @discardableResult
    func deleteReporting<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> DeletionReport

    /// What the alias named `name` names, or `nil` when there is none: the storage under
    /// ``setAlias(_:to:)-(_,E)`` and ``alias(_:as:)``, which users call instead. A backend's hook, visible through
    /// `@_spi(PersistenceBackend) import PersistenceCore`.
    @_spi(PersistenceBackend) func aliasTarget(named name: String) throws -> AliasTarget?

    /// Stores (or, with `nil`, removes) what the alias named `name` names, in this transaction, and tells the
    /// observers of that alias when the transaction commits. The name has been validated.
    /// - Throws: ``PersistenceError/Code/readOnly`` in a read.
    @_spi(PersistenceBackend) func setAliasTarget(_ target: AliasTarget?, named name: String) throws
}

extension DatabaseContext {
    /// A context of no backend's (a test's stand-in) can't search: ``PersistenceError/Code/unsupported``.
    public func search<E: Entity>(_ type: E.Type, _ query: Query) throws -> [SearchHit<E>] {
        throw PersistenceError(.unsupported, "this context doesn't search")
    }

    /// A context of no backend's (a test's stand-in) can't rank by distance: ``PersistenceError/Code/unsupported``.
    public func nearest<E: Entity>(_ type: E.Type, _ query: Query) throws -> [Neighbour<E>] {
        throw PersistenceError(.unsupported, "this context doesn't rank vectors")
    }

    /// Inserts each entity in turn.
    public func create<E: Entity, S: Sequence<E>>(_ entities: S) throws {
        for entity in entities {
            try checkCancellation()
            try create(entity)
        }
    }

    /// Upserts each entity in turn (see ``upsert(_:)-(E)``) and counts what happened: stale ones
    /// (``Entity/stampAttribute``) are counted as ignored, not thrown.
    @discardableResult
    public func upsert<E: Entity, S: Sequence<E>>(_ entities: S) throws -> ChangeCounts {
        var counts = ChangeCounts()
        for entity in entities {
            try checkCancellation()
            counts.count(try upsert(entity))
        }
        return counts
    }

    /// Recovers the matching records, then calls `body` with each: correct, but it holds them all in memory.
    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        for entity in try recover(type, query: query) { try body(entity) }
    }

    /// Calls `body` with each record matching a condition, sorted and windowed, one record at a time.
    ///
    /// ```swift
    /// var total = 0.0
    /// try context.forEach(Order.self, where: Field("paid") == true) { order in total += order.amount }
    /// ```
    public func forEach<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0, _ body: (E) throws -> Void
    ) throws {
        try forEach(type, query: Query(where: condition, sortedBy: sort, limit: limit, offset: offset), body)
    }

    /// The records matching a condition, sorted and windowed.
    ///
    /// ```swift
    /// let page: [User] = try context.recover(where: Field("age") >= 18, sortedBy: [.ascending("name")], limit: 20)
    /// ```
    public func recover<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0
    ) throws -> [E] {
        try recover(type, query: Query(where: condition, sortedBy: sort, limit: limit, offset: offset))
    }

    /// The records whose attribute `key` equals `value` — the original Persistence API.
    public func recover<E: Entity>(_ type: E.Type = E.self, key: String, value: some ValueConvertible) throws -> [E] {
        try recover(type, query: Query(where: Field(key) == value))
    }

    /// The record with this primary key, or `nil`.
    public func recover<E: Entity>(id: E.ID) throws -> E? { try recover(E.self, id: id) }

    /// How many records of the type there are.
    public func count<E: Entity>(_ type: E.Type) throws -> Int { try count(type, where: nil) }

    /// Deletes the stored record with this entity's primary key; returns whether there was one.
    @discardableResult
    public func delete<E: Entity>(_ entity: E) throws -> Bool { try delete(E.self, id: entity.id) }

    /// Deletes every record of the type; returns how many.
    @discardableResult
    public func deleteAll<E: Entity>(_ type: E.Type) throws -> Int { try delete(type, where: nil) }
}
