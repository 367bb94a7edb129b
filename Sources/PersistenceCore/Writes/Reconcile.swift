extension DatabaseContext {
    /// Makes the stored records of `type` in `scope` equal to `incoming` — a full snapshot from a server, say — in
    /// this write, and counts what it did.
    ///
    /// Records are matched by primary key. An incoming record that is stored unchanged is left alone
    /// (``ChangeCounts/unchanged``); one that differs replaces the stored one, unless the stored one is newer by the
    /// entity's stamp (``Entity/stampAttribute``, counted ``ChangeCounts/ignoredAsStale``); one not stored in the
    /// scope is upserted (inserted, or — when a record outside the scope has its primary key — updated). A stored
    /// record in the scope that `incoming` lacks is deleted. Records outside the scope are never deleted.
    /// An empty `incoming` deletes the whole scope.
    ///
    /// It reads the scope once and looks incoming records up by primary key in memory, so its cost is one pass over
    /// the scope plus a write per change — not a lookup per incoming record. Deletes run first, then updates, then
    /// inserts. Like every write it is all or nothing; an async write's cancellation stops it between records.
    ///
    /// ```swift
    /// let counts = try db.write { context in
    ///     try context.reconcile(Message.self, with: fetched, where: Field("threadID") == thread.id)
    /// }
    /// print(counts)   // inserted 3, updated 1, unchanged 96, ignored as stale 0, deleted 2
    /// ```
    ///
    /// - Parameters:
    ///   - type: The entity type.
    ///   - incoming: Every record the scope should hold; a primary key may appear once.
    ///   - scope: Which stored records `incoming` stands for — the scope; `nil` for all of the type.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` when a primary key appears twice in `incoming`, before
    ///   anything changes; what the writes throw (a unique index, say), the write then rolling back.
    @discardableResult
    public func reconcile<E: Entity, S: Sequence<E>>(
        _ type: E.Type = E.self, with incoming: S, where scope: Condition? = nil
    ) throws -> ChangeCounts {
        let layout = try SchemaCache.layout(for: E.self)
        let key = layout.primaryKeyIndex
        let writer = RecordWriter(layout: layout)
        var entities: [E] = []
        var encoded: [[Value]] = []
        var positions: [Value: Int] = [:]
        for entity in incoming {
            let values = try writer.encode(entity)
            guard positions.updateValue(entities.count, forKey: values[key]) == nil else {
                throw PersistenceError(
                    .invalidArgument, "the records to reconcile hold a '\(layout.entity.name)' primary key twice")
            }
            entities.append(entity)
            encoded.append(values)
            if entities.count & 1023 == 0 { try checkCancellation() }
        }

        var counts = ChangeCounts()
        var matched = [Bool](repeating: false, count: entities.count)
        var changed: [Int] = []
        /// Sorts one stored record in the scope; returns whether `incoming` lacks it (it is to be deleted).
        func isAbsent(_ stored: [Value]) -> Bool {
            guard let index = positions[stored[key]] else { return true }
            matched[index] = true
            if layout.sameRecord(encoded[index], stored) {
                counts.unchanged += 1
            } else {
                changed.append(index)
            }
            return false
        }

        if let access = self as? any RecordValueAccess {
            var doomed: [Value] = []
            try access.forEachRecordValues(E.self, where: scope) { stored in
                if isAbsent(stored) { doomed.append(stored[key]) }
            }
            counts.deleted += try access.deleteFollowingRules(E.self, keys: doomed)
        } else {
            var doomed: [E.ID] = []
            try forEach(E.self, query: Query(where: scope)) { stored in
                if try isAbsent(writer.encode(stored)) { doomed.append(stored.id) }
            }
            for id in doomed {
                try checkCancellation()
                if try delete(E.self, id: id) { counts.deleted += 1 }
            }
        }
        for index in changed {
            try checkCancellation()
            counts.count(try upsert(entities[index]))
        }
        for index in entities.indices where !matched[index] {
            try checkCancellation()
            counts.count(try upsert(entities[index]))
        }
        return counts
    }
}

extension Database {
    /// Makes the stored records of `type` in `scope` equal to `incoming`, in one write transaction (see
    /// ``DatabaseContext/reconcile(_:with:where:)``).
    @discardableResult
    public func reconcile<E: Entity, S: Sequence<E>>(
        _ type: E.Type = E.self, with incoming: S, where scope: Condition? = nil
    ) throws -> ChangeCounts {
        try write { try $0.reconcile(type, with: incoming, where: scope) }
    }

    /// Makes the stored records of `type` in `scope` equal to `incoming`, in one write transaction off the
    /// cooperative pool; a cancelled task's reconcile rolls back and throws `CancellationError`.
    @discardableResult
    public func reconcile<E: Entity>(_ type: E.Type = E.self, with incoming: [E], where scope: Condition? = nil)
        async throws -> ChangeCounts
    {
        try await write { try $0.reconcile(type, with: incoming, where: scope) }
    }
}
