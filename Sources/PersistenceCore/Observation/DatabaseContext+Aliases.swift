/// Aliases: names for a record or an ordered list of records, such as `"currentUser"` or `"favorites"`.
///
/// An alias stores the entity and primary keys it names, in the store, in the transaction that sets it: it
/// survives restarts and rolls back with the write that set it. It refers by primary key, like a weak reference:
/// when its record is deleted it reads as `nil` (a list skips it), and it reaches the record again if one with
/// that key is created. Observe one with ``Database/observeAlias(_:as:)``.
///
/// ```swift
/// try db.write { context in
///     try context.upsert(user)
///     try context.setAlias("currentUser", to: user)
/// }
/// let me = try db.read { try $0.alias("currentUser", as: User.self) }
/// ```
extension DatabaseContext {
    /// Names one record: the alias reads as the record with this entity's primary key.
    /// - Throws: ``PersistenceError/Code/invalidName`` for an empty or too long name,
    ///   ``PersistenceError/Code/unknownEntity`` when `E` isn't in the model, ``PersistenceError/Code/readOnly``
    ///   in a read.
    public func setAlias<E: Entity>(_ name: String, to entity: E) throws {
        try setAlias(name, to: E.self, id: entity.id)
    }

    /// Names the record of type `E` with primary key `id` (which need not exist yet).
    public func setAlias<E: Entity>(_ name: String, to type: E.Type, id: E.ID) throws {
        try AliasTarget.validate(name: name)
        try checkInModel(E.self)
        try setAliasTarget(AliasTarget(entity: E.entityName, keys: [id.storedValue], isList: false), named: name)
    }

    /// Names an ordered list of records (possibly empty).
    public func setAlias<E: Entity>(_ name: String, to entities: [E]) throws {
        try setAlias(name, to: E.self, ids: entities.map(\.id))
    }

    /// Names an ordered list of records of type `E` by primary key.
    public func setAlias<E: Entity>(_ name: String, to type: E.Type, ids: [E.ID]) throws {
        try AliasTarget.validate(name: name)
        try checkInModel(E.self)
        try setAliasTarget(AliasTarget(entity: E.entityName, keys: ids.map(\.storedValue), isList: true), named: name)
    }

    /// Removes an alias; returns whether there was one. The records it named are untouched.
    @discardableResult
    public func removeAlias(_ name: String) throws -> Bool {
        try AliasTarget.validate(name: name)
        guard try aliasTarget(named: name) != nil else { return false }
        try setAliasTarget(nil, named: name)
        return true
    }

    /// The record an alias names; `nil` when there is no such alias or its record doesn't exist.
    /// - Throws: ``PersistenceError/Code/typeMismatch`` when the alias names another entity, or a list.
    public func alias<E: Entity>(_ name: String, as type: E.Type = E.self) throws -> E? {
        guard let target = try checkedTarget(name, E.self) else { return nil }
        guard !target.isList, let key = target.keys.first else {
            throw PersistenceError(.typeMismatch, "alias '\(name)' names a list; read it with aliasList(_:as:)")
        }
        return try recover(E.self, id: RecordDecoder.primaryKey(E.ID.self, from: key, layout: E.layout()))
    }

    /// The records an alias names, in its order, skipping deleted ones; empty when there is no such alias.
    /// A single-record alias reads as a list of at most one.
    /// - Throws: ``PersistenceError/Code/typeMismatch`` when the alias names another entity.
    public func aliasList<E: Entity>(_ name: String, as type: E.Type = E.self) throws -> [E] {
        guard let target = try checkedTarget(name, E.self) else { return [] }
        let layout = try E.layout()
        return try target.keys.compactMap {
            try recover(E.self, id: RecordDecoder.primaryKey(E.ID.self, from: $0, layout: layout))
        }
    }

    private func checkedTarget<E: Entity>(_ name: String, _ type: E.Type) throws -> AliasTarget? {
        try AliasTarget.validate(name: name)
        ReadTracker.noteAlias(name)
        guard let target = try aliasTarget(named: name) else { return nil }
        guard target.entity == E.entityName else {
            throw PersistenceError(
                .typeMismatch, "alias '\(name)' names a '\(target.entity)' record, not a '\(E.entityName)'")
        }
        return target
    }

    /// Throws `unknownEntity` when `E` isn't part of the database's model (reads nothing).
    private func checkInModel<E: Entity>(_ type: E.Type) throws {
        _ = try recover(E.self, query: Query(limit: 0))
    }
}

extension Entity {
    fileprivate static func layout() throws -> RecordLayout { try SchemaCache.layout(for: Self.self) }
}
