/// Observation: async sequences of query results, change sets and aliases, fed by each commit.
extension Database {
    /// Observes the records of a type matching a condition: the current records first, then the records again
    /// after each committed write that changed records of that type.
    ///
    /// ```swift
    /// let task = Task {
    ///     for try await todos in db.observe(Todo.self, where: Field("done") == false, sortedBy: [.ascending("due")]) {
    ///         print("\(todos.count) to do")
    ///     }
    /// }
    /// try await db.write { try $0.create(Todo(id: 1, title: "Write the docs", done: false, due: .now)) }
    /// task.cancel()                                 // ends the observation
    /// ```
    ///
    /// Writes to other types and writes that roll back produce no value, and neither does a write that leaves the
    /// result as it was (for `Equatable` entities). See ``ObservedValues`` for ordering, coalescing, duplicates and
    /// how the observation ends; this is ``ValueObservation/records(_:where:sortedBy:limit:offset:)`` started with
    /// ``ValueObservation/values(in:)``.
    /// - Throws: From the loop: what the read throws, such as ``PersistenceError/Code/unknownEntity`` or
    ///   ``PersistenceError/Code/unknownAttribute``; the observation then ends.
    public func observe<E: Entity>(
        _ type: E.Type = E.self, where condition: Condition? = nil, sortedBy sort: [Sort] = [], limit: Int? = nil,
        offset: Int = 0
    ) -> ObservedValues<[E]> {
        observe(type, query: Query(where: condition, sortedBy: sort, limit: limit, offset: offset))
    }

    /// Observes the records of a type matching a query (and, for a condition on related records, after writes to
    /// the related entities too).
    public func observe<E: Entity>(_ type: E.Type, query: Query) -> ObservedValues<[E]> {
        ValueObservation.records(type, query: query).values(in: self)
    }

    /// Observes one record by primary key: the record, each new version of it, and `nil` while there is none.
    public func observe<E: Entity>(_ type: E.Type, id: E.ID) -> ObservedValues<E?> {
        ValueObservation.record(type, id: id).values(in: self)
    }

    /// Observes any read: `fetch` runs in a read transaction at once, then again after each committed write that
    /// changed records of one of `entities`, set or removed one of `aliases`, or changed what the last run of
    /// `fetch` read through the context's typed operations (tracked without being listed: see ``ValueObservation``).
    ///
    /// ```swift
    /// let unread = db.observe(tracking: [Message.self]) { try $0.count(Message.self, where: Field("read") == false) }
    /// ```
    ///
    /// - Throws: From the loop: what `fetch` throws; ``PersistenceError/Code/untrackedRead`` when `fetch` ran raw SQL
    ///   and `entities` and `aliases` are both empty.
    public func observe<R: Sendable>(
        tracking entities: [any Entity.Type], aliases: [String] = [],
        _ fetch: @escaping @Sendable (Context) throws -> R
    ) -> ObservedValues<R> {
        ValueObservation.tracking(entities, aliases: aliases, fetch).values(in: self)
    }

    /// Observes the record an alias names: the record first (or `nil`), then again whenever the alias is set to
    /// another record, the record changes, or it is deleted or the alias removed (`nil`).
    ///
    /// ```swift
    /// for try await user in db.observeAlias("currentUser", as: User.self) {
    ///     title = user?.name ?? "Signed out"
    /// }
    /// ```
    public func observeAlias<E: Entity>(_ name: String, as type: E.Type = E.self) -> ObservedValues<E?> {
        ValueObservation.alias(name, as: type).values(in: self)
    }

    /// Observes the records a list alias names, in its order.
    public func observeAliasList<E: Entity>(_ name: String, as type: E.Type = E.self) -> ObservedValues<[E]> {
        ValueObservation.aliasList(name, as: type).values(in: self)
    }

    /// The change sets of a type: for each committed write that changed its records, the primary keys inserted,
    /// updated and deleted.
    ///
    /// ```swift
    /// for await change in db.changes(of: User.self) {
    ///     try await sync.push(inserted: change.inserted, updated: change.updated, deleted: change.deleted)
    /// }
    /// ```
    ///
    /// Starts when called; nothing is coalesced (see ``ObservedChanges``). While any change-set observation is
    /// live, write transactions record the primary keys they touch.
    public func changes<E: Entity>(of type: E.Type) -> ObservedChanges<E> {
        ObservedChanges(hub: observationHub)
    }
}
