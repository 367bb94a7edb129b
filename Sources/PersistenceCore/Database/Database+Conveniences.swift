extension Database {
    /// Inserts a new record in its own write transaction.
    /// - Throws: ``PersistenceError/Code/duplicateKey`` when the primary key exists, with nothing changed.
    public func create<E: Entity>(_ entity: E) throws { try write { try $0.create(entity) } }

    /// Inserts many new records in one write transaction: all or none.
    public func create<E: Entity, S: Sequence<E>>(_ entities: S) throws { try write { try $0.create(entities) } }

    /// The records matching a condition, sorted and windowed; all records of the type by default.
    ///
    /// ```swift
    /// let all: [User] = try db.recover()
    /// let page: [User] = try db.recover(where: Field("age") >= 18, sortedBy: [.descending("age")], limit: 10)
    /// ```
    public func recover<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0
    ) throws -> [E] {
        try read { try $0.recover(type, where: condition, sortedBy: sort, limit: limit, offset: offset) }
    }

    /// Calls `body` with each matching record, one at a time, in one read transaction.
    ///
    /// Iterating this way holds one decoded record in memory, where ``recover(_:where:sortedBy:limit:offset:)``
    /// holds them all. Throw from `body` to stop early.
    ///
    /// ```swift
    /// try db.forEach(User.self, where: Field("active") == true) { user in print(user.name) }
    /// ```
    public func forEach<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0, _ body: (E) throws -> Void
    ) throws {
        try read { try $0.forEach(type, where: condition, sortedBy: sort, limit: limit, offset: offset, body) }
    }

    /// The records a query selects — its condition, order, window and limit per value (``Query/limitPerValue``).
    public func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] {
        try read { try $0.recover(type, query: query) }
    }

    /// Calls `body` with each record a query selects, one at a time, in one read transaction.
    public func forEach<E: Entity>(_ type: E.Type, query: Query, _ body: (E) throws -> Void) throws {
        try read { try $0.forEach(type, query: query, body) }
    }

    /// The records a query with a full-text search selects, with their relevance and snippets (``SearchHit``), in
    /// one read transaction.
    ///
    /// ```swift
    /// let hits = try db.search(Article.self, Query(search: .matching("swift actor*"), limit: 10))
    /// ```
    public func search<E: Entity>(_ type: E.Type, _ query: Query) throws -> [SearchHit<E>] {
        try read { try $0.search(type, query) }
    }

    /// The records nearest a vector, with their distances (``Neighbour``), in one read transaction.
    ///
    /// ```swift
    /// let neighbours = try db.nearest(
    ///     Passage.self, Query(where: Field("lang") == "en", nearest: .to(question, in: "embedding"), limit: 10))
    /// ```
    public func nearest<E: Entity>(_ type: E.Type, _ query: Query) throws -> [Neighbour<E>] {
        try read { try $0.nearest(type, query) }
    }

    /// The records whose attribute `key` equals `value`.
    public func recover<E: Entity>(_ type: E.Type = E.self, key: String, value: some ValueConvertible) throws -> [E] {
        try read { try $0.recover(type, key: key, value: value) }
    }

    /// The record with this primary key, or `nil`.
    public func recover<E: Entity>(_ type: E.Type = E.self, id: E.ID) throws -> E? {
        try read { try $0.recover(type, id: id) }
    }

    /// How many records match the condition (all when `nil`).
    public func count<E: Entity>(_ type: E.Type, where condition: Condition? = nil) throws -> Int {
        try read { try $0.count(type, where: condition) }
    }

    /// Replaces the stored record with the entity's primary key.
    /// - Throws: ``PersistenceError/Code/notFound`` when there is none.
    public func update<E: Entity>(_ entity: E) throws { try write { try $0.update(entity) } }

    /// Inserts the record, or replaces the one with the same primary key — unless the stored one is newer by the
    /// entity's stamp (see ``DatabaseContext/upsert(_:)-(E)``).
    @discardableResult
    public func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome { try write { try $0.upsert(entity) } }

    /// Upserts many records in one write transaction, all or none, and counts what happened.
    @discardableResult
    public func upsert<E: Entity, S: Sequence<E>>(_ entities: S) throws -> ChangeCounts {
        try write { try $0.upsert(entities) }
    }

    /// Deletes the stored record with the entity's primary key; returns whether there was one.
    @discardableResult
    public func delete<E: Entity>(_ entity: E) throws -> Bool { try write { try $0.delete(entity) } }

    /// Deletes the record with this primary key; returns whether there was one.
    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool {
        try write { try $0.delete(type, id: id) }
    }

    /// Deletes the records matching the condition; returns how many.
    @discardableResult
    public func delete<E: Entity>(_ type: E.Type, where condition: Condition) throws -> Int {
        try write { try $0.delete(type, where: condition) }
    }

    /// Deletes every record of the type; returns how many.
    @discardableResult
    public func deleteAll<E: Entity>(_ type: E.Type) throws -> Int { try write { try $0.deleteAll(type) } }

    /// Deletes the records matching the condition (all when `nil`) in one write, applying delete rules, and reports
    /// what it deleted and nullified per entity (``DatabaseContext/deleteReporting(_:where:)``).
    @discardableResult
    public func deleteReporting<E: Entity>(_ type: E.Type, where condition: Condition? = nil) throws
        -> DeletionReport
    {
        try write { try $0.deleteReporting(type, where: condition) }
    }
}
