/// What every backend's context offers below entity values: records as arrays of stored values, read, replaced,
/// looked up and deleted without the rules of relationships. The core builds on it what is written once for every
/// backend — delete rules, foreign-key checks (``ModelGraph``), reconciling.
package protocol RecordValueAccess: AnyObject {
    /// The relationships of the database's model.
    var graph: ModelGraph { get }

    /// The write's change recorder; `nil` in a read.
    var recorder: ChangeRecorder? { get }

    /// Calls `body` with the values (in layout order) of each record of `type` that `query` selects, in its order;
    /// `body` must not change the store.
    func forEachRecordValues<E: Entity>(_ type: E.Type, query: Query, _ body: ([Value]) throws -> Void) throws

    /// Calls `body` with the values of the attributes at `positions` (in that order) of each record of `type` that
    /// `query` selects: what a projection reads. SQL backends select only those columns; the default reads whole
    /// records.
    func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, attributes positions: [Int], _ body: ([Value]) throws -> Void
    ) throws

    /// The values (in layout order) of the record of `type` whose primary key's stored value is `key`, or `nil`.
    func recordValues<E: Entity>(_ type: E.Type, key: Value) throws -> [Value]?

    /// Writes a record of `type` from `values` (in layout order) as `create` (when it doesn't `exist`) or `update`
    /// writes an entity: each value checked as decoding the entity would check it, foreign keys checked, the change
    /// recorded — without the entity.
    /// - Throws: `invalidValue` naming an attribute whose value doesn't fit; what `create` and `update` throw.
    func storeRecord<E: Entity>(_ type: E.Type, values: [Value], exists: Bool) throws

    /// Writes many records of `type` as `storeRecord(_:values:exists:)` writes one — each value checked, the foreign
    /// keys checked (a lookup per relationship, not per record), each change recorded — through the storage's
    /// multi-row write, all or nothing. A record that doesn't `exist` is inserted, one that does replaced.
    /// - Throws: `invalidArgument` for two records with one key; what `storeRecord` throws (`duplicateKey` for a
    ///   record to insert that is stored, `notFound` for one to replace that isn't), having written none.
    func storeRecords<E: Entity>(_ type: E.Type, rows: [[Value]], exists: [Bool]) throws

    /// Whether a record of `type` has the primary key whose stored value is `key`.
    func containsRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool

    /// Whether foreign-key checks keep what they find until the transaction ends (``lockReferenced(_:keys:)``).
    var locksReferences: Bool { get }

    /// Which of `keys` are primary keys of stored records of `type`, each kept until the transaction ends: a
    /// foreign-key check where concurrent writers could delete the records found (``locksReferences``).
    func lockReferenced<E: Entity>(_ type: E.Type, keys: [Value]) throws -> Set<Value>

    /// Replaces the stored record of `type` that has the primary key in `values` (which it has) with `values`,
    /// keeping indexes and observers up to date; no foreign key is checked.
    func replaceRecord<E: Entity>(_ type: E.Type, values: [Value]) throws

    /// Deletes the record of `type` whose primary key's stored value is `key`, applying no delete rule; returns
    /// whether there was one.
    func deleteRecord<E: Entity>(_ type: E.Type, key: Value) throws -> Bool

    /// Deletes the records of `type` whose primary keys' stored values are `keys` (each once), applying no delete
    /// rule; returns how many there were.
    func deleteRecords<E: Entity>(_ type: E.Type, keys: [Value]) throws -> Int

    /// Deletes the records of `type` matching `condition` (all when `nil`), applying no delete rule; returns how
    /// many.
    func deleteRecords<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int

    /// The primary keys of the records of `type` that refer through the attribute at `foreignKey` (a reference to
    /// `type` itself) to one of `keys`, or to a record found so, at any depth; `nil` when the backend can't find
    /// them at once (``GraphDeletion`` then walks level by level).
    func referringClosure<E: Entity>(_ type: E.Type, to keys: [Value], foreignKey: Int) throws -> [Value]?

    /// Throws what a write would throw here: ``PersistenceError/Code/contextExpired`` after the block,
    /// ``PersistenceError/Code/readOnly`` in a read.
    func requireWritable() throws
}

extension RecordValueAccess {
    /// Reads whole records and hands over the values at `positions`.
    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, query: Query, attributes positions: [Int], _ body: ([Value]) throws -> Void
    ) throws {
        var projected: [Value] = []
        projected.reserveCapacity(positions.count)
        try forEachRecordValues(type, query: query) { values in
            projected.removeAll(keepingCapacity: true)
            for position in positions { projected.append(values[position]) }
            try body(projected)
        }
    }

    /// Calls `body` with the values of each record of `type` matching `condition` (all when `nil`), in primary-key
    /// order; `body` must not change the store.
    package func forEachRecordValues<E: Entity>(
        _ type: E.Type, where condition: Condition?, _ body: ([Value]) throws -> Void
    ) throws {
        try forEachRecordValues(type, query: Query(where: condition), body)
    }

    /// Checks the foreign keys of a record of `type` about to be written: each non-`nil` one names a stored record
    /// of its target (or this record itself).
    /// - Throws: ``PersistenceError/Code/referenceNotFound`` naming the entity and relationship.
    @inline(__always)
    package func checkReferences<E: Entity>(_ values: [Value], of type: E.Type) throws {
        guard !graph.isEmpty else { return }
        let position = try graph.positions.position(of: type)
        let references = graph.references[position]
        guard !references.isEmpty else { return }
        try checkReferences(values, references, at: position)
    }

    private func checkReferences(_ values: [Value], _ references: [ModelGraph.Reference], at position: Int) throws {
        for reference in references {
            let key = values[reference.foreignKey]
            if key == .null { continue }
            if reference.target == position, key == values[graph.layouts[position].primaryKeyIndex] { continue }
            let found =
                locksReferences
                ? try lockReferenced(graph.types[reference.target], keys: [key]).contains(key)
                : try contains(graph.types[reference.target], key)
            guard found else {
                try missing(reference, of: values, at: position)
                continue
            }
        }
    }

    /// A record's reference to no stored record: noted as dangling while remote changes are applied (a later page
    /// may bring the record), refused otherwise.
    /// - Throws: ``PersistenceError/Code/referenceNotFound`` naming the entity and relationship.
    private func missing(_ reference: ModelGraph.Reference, of values: [Value], at position: Int) throws {
        let layout = graph.layouts[position]
        let target = graph.layouts[reference.target].entity.name
        guard let recorder, recorder.appliesRemoteChanges else {
            throw PersistenceError(
                .referenceNotFound,
                "a '\(layout.entity.name)' record's relationship '\(reference.name)' names a '\(target)' record that doesn't exist"
            )
        }
        recorder.danglingReferences.append(
            DanglingReference(
                source: layout.entity.name, sourceKey: values[layout.primaryKeyIndex],
                foreignKey: layout.names[reference.foreignKey], target: target, key: values[reference.foreignKey]))
    }

    /// Checks the foreign keys of many records of `type` about to be written together, one lookup per relationship
    /// (keys of the records themselves count as stored when the relationship refers to `type`).
    /// - Throws: ``PersistenceError/Code/referenceNotFound`` naming the entity and relationship.
    package func checkReferences<E: Entity>(ofRows rows: [[Value]], of type: E.Type) throws {
        guard !graph.isEmpty, !rows.isEmpty else { return }
        let position = try graph.positions.position(of: type)
        let layout = graph.layouts[position]
        for reference in graph.references[position] {
            var wanted = Set<Value>()
            for values in rows where values[reference.foreignKey] != .null {
                wanted.insert(values[reference.foreignKey])
            }
            if reference.target == position {
                for values in rows { wanted.remove(values[layout.primaryKeyIndex]) }
            }
            guard !wanted.isEmpty else { continue }
            let found =
                locksReferences
                ? try lockReferenced(graph.types[reference.target], keys: Array(wanted))
                : try storedKeys(graph.types[reference.target], among: Array(wanted))
            guard found.count < wanted.count else { continue }
            for values in rows {
                let key = values[reference.foreignKey]
                guard key != .null, wanted.contains(key), !found.contains(key) else { continue }
                try missing(reference, of: values, at: position)
            }
        }
    }

    /// Which of `keys` are primary keys of stored records of `type`: a query per 1,000, reading only the keys.
    package func storedKeys<T: Entity>(_ type: T.Type, among keys: [Value]) throws -> Set<Value> {
        let layout = graph.layouts[try graph.positions.position(of: type)]
        let key = layout.primaryKeyIndex
        var found = Set<Value>()
        var start = keys.startIndex
        while start < keys.endIndex {
            let end = min(start + 1_000, keys.endIndex)
            try forEachRecordValues(
                type, query: Query(where: Field(layout.names[key]).in(Array(keys[start..<end]))), attributes: [key]
            ) { found.insert($0[0]) }
            start = end
        }
        return found
    }

    private func contains<T: Entity>(_ type: T.Type, _ key: Value) throws -> Bool {
        try containsRecord(type, key: key)
    }

    /// Whether deleting records of `type` has rules to apply: some to-one refers to the entity.
    @inline(__always)
    package func hasDeleteRules<E: Entity>(_ type: E.Type) throws -> Bool {
        guard !graph.isEmpty else { return false }
        return try !graph.referrers[graph.positions.position(of: type)].isEmpty
    }

    /// Deletes the record of `type` whose primary key's stored value is `key`, applying the delete rules of the
    /// to-ones that refer to it; returns whether there was one.
    package func deleteRecordFollowingRules<E: Entity>(_ type: E.Type, key: Value) throws -> Bool {
        guard try hasDeleteRules(type) else { return try deleteRecord(type, key: key) }
        try requireWritable()
        return try deleteFollowingRules(type, keys: [key]) > 0
    }

    /// Deletes the records of `type` matching `condition` (all when `nil`) and applies the delete rules of the
    /// to-ones that refer to them (``DeleteRule``); returns how many records of `type` matched.
    package func deleteFollowingRules<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int {
        var deletion = try deletionFollowingRules(type, where: condition)
        return try deletion.run()
    }

    /// Deletes the records of `type` matching `condition` (all when `nil`), applying the delete rules of the
    /// to-ones that refer to them, and reports everything it deleted and nullified.
    package func deleteReportingRules<E: Entity>(_ type: E.Type, where condition: Condition?) throws
        -> DeletionReport
    {
        guard try hasDeleteRules(type) else {
            var report = DeletionReport()
            report.countDeleted(try deleteRecords(type, where: condition), of: E.entityName)
            return report
        }
        var deletion = try deletionFollowingRules(type, where: condition)
        _ = try deletion.run()
        return deletion.report
    }

    /// The deletion of the records of `type` matching `condition`, before it runs.
    private func deletionFollowingRules<E: Entity>(_ type: E.Type, where condition: Condition?) throws
        -> GraphDeletion<Self>
    {
        try requireWritable()
        let position = try graph.positions.position(of: type)
        let primaryKey = graph.layouts[position].primaryKeyIndex
        var keys: [Value] = []
        try forEachRecordValues(type, where: condition) { keys.append($0[primaryKey]) }
        return GraphDeletion(self, root: position, keys: keys)
    }

    /// Deletes the records of `type` with these primary keys (their stored values) and applies the delete rules of
    /// the to-ones that refer to them; returns how many there were.
    package func deleteFollowingRules<E: Entity>(_ type: E.Type, keys: [Value]) throws -> Int {
        try requireWritable()
        guard try hasDeleteRules(type) else {
            var count = 0
            for key in keys {
                try CancellationFlag.checkCurrent()
                if try deleteRecord(type, key: key) { count += 1 }
            }
            return count
        }
        let position = try graph.positions.position(of: type)
        let stored = try keys.filter { try containsRecord(type, key: $0) }
        var deletion = GraphDeletion(self, root: position, keys: stored)
        return try deletion.run()
    }
}

extension DatabaseContext {
    /// What the write transaction of this context changed so far and how it was asked to treat it: the recorder a
    /// feature's code in the write's block reads (sync's client, after applying a page). `nil` in a read, or for a
    /// context of a backend not built on the core's ``StoreContext``.
    package var changeRecorder: ChangeRecorder? { recordAccess?.recorder }

    /// The context's record-level access (``RecordValueAccess``): every context built on the core's
    /// ``StoreContext`` has it.
    package var recordAccess: (any RecordValueAccess)? { self as? any RecordValueAccess }
}
