import Foundation

/// A migration block: brings a store written at `oldSchemaVersion` up to the builder's model, given to a builder's
/// `migrationBlock` (SQLite, LMDB, PostgreSQL: the same block gives the same records on each).
///
/// One closure serves every step — test the old version (`if oldSchemaVersion < 2 { … }`) — and runs **exactly
/// once** per start-up that finds an older store, inside the write transaction that opens it.
public typealias MigrationBlock = @Sendable (_ migration: Migration, _ oldSchemaVersion: Int) throws -> Void

/// What a migration block works with: the store's records in the old and the new schema, as dynamic objects.
///
/// Before the block runs, nothing has changed. What the schema difference can do alone is done when the block
/// returns, for every object the block didn't handle: attributes added (with their declared
/// ``Entity/defaultValues`` default, else `nil`), removed attributes dropped, removed entities deleted, indexes
/// rebuilt. The block adds what needs code:
///
/// ```swift
/// builder.migrationBlock = { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         try migration.renameProperty(onType: "Person", from: "name", to: "fullName")
///     }
///     if oldSchemaVersion < 3 {
///         try migration.enumerateObjects(ofType: "Person") { old, new in
///             guard let old, let new else { return }
///             try new.set("age", to: Int(try old.string("age") ?? "") ?? 0)   // String → Int
///         }
///     }
/// }
/// ```
///
/// Everything — the block's changes, the schema's, every record rewritten (on encrypted LMDB, sealed with the store's
/// key and fresh nonces), indexes and the new version — becomes the store's at once, or nothing does: an error the
/// block throws, a record the new schema refuses, or a crash leaves the store as it was. While the block runs, the
/// stored records are only read; what it writes waits in storage of the migration's own (LMDB: databases written in
/// steps that each commit, then switched to by one last small write; SQLite and PostgreSQL: temporary tables in the
/// transaction that opens the store): memory doesn't grow with the store. A `Migration` is only valid while the
/// block runs.
public final class Migration {
    let run: any MigrationBlockRun
    /// Whether the migration block is still running.
    private(set) var isOpen = true

    /// The schema version the store was written with.
    public let oldSchemaVersion: Int
    /// The schema version the store is migrated to (the builder's).
    public let newSchemaVersion: Int
    /// The entities as the store holds them before the migration.
    public var oldSchema: [EntityDescription] { run.entityNames.compactMap { try? run.entity($0).old?.entity } }
    /// The entities of the builder's model.
    public var newSchema: [EntityDescription] { run.entityNames.compactMap { try? run.entity($0).new?.entity } }

    package init(run: any MigrationBlockRun, oldSchemaVersion: Int, newSchemaVersion: Int) {
        self.run = run
        self.oldSchemaVersion = oldSchemaVersion
        self.newSchemaVersion = newSchemaVersion
    }

    /// Calls `body` with every object of an entity that exists when the enumeration begins.
    ///
    /// `old` is the object as stored before the migration (read-only; `nil` for objects the migration created or
    /// for an entity the old schema doesn't have); `new` is the object in the new schema, with what was done to it
    /// so far (`nil` for an entity the model no longer has). Values set on `new` are stored when `body` returns;
    /// ``delete(_:)`` deletes it. Objects are streamed in primary-key order; enumerating an entity again sees the
    /// same `old` values and the `new` values as the previous enumeration left them. Progress is reported per
    /// 1,000 objects.
    ///
    /// - Parameters:
    ///   - entity: The entity's name, in the old schema or the new.
    ///   - body: Called once per object; what it throws ends the migration with nothing changed.
    /// - Throws: ``PersistenceError`` — `unknownEntity`, `invalidArgument` for an enumeration of an entity inside
    ///   its own enumeration, `contextExpired` after the block returned; and what `body` throws.
    public func enumerateObjects(
        ofType entity: String, _ body: (_ old: MigrationObject?, _ new: MigrationObject?) throws -> Void
    ) throws {
        try checkOpen()
        let pass = try run.entity(entity)
        try run.enumerate(pass) { oldValues, newValues in
            let old = try oldValues.map { values in
                try MigrationObject(
                    Record(layout: try Self.layout(pass.old, of: pass), values: values), role: .old, migration: self,
                    pass: pass)
            }
            let new = try newValues.map { values in
                try MigrationObject(
                    Record(layout: try Self.layout(pass.new, of: pass), values: values), role: .enumerated,
                    migration: self, pass: pass)
            }
            defer {
                old?.expire()
                new?.expire()
            }
            try body(old, new)
            guard let new else { return .unchanged }
            if new.isDeleted { return .delete }
            return new.isChanged ? .store(new.record.values) : .unchanged
        }
    }

    /// Calls `body` with every object of an entity type of the model (see ``enumerateObjects(ofType:_:)-(String,_)``).
    public func enumerateObjects<E: Entity>(
        ofType type: E.Type, _ body: (_ old: MigrationObject?, _ new: MigrationObject?) throws -> Void
    ) throws {
        try enumerateObjects(ofType: SchemaCache.layout(for: E.self).entity.name, body)
    }

    /// Renames an attribute: every object's value of `oldName` in the old schema becomes its value of `newName`
    /// in the new one (an attribute added and another removed would otherwise lose the values).
    ///
    /// Call it before enumerating, creating or deleting objects of the entity.
    /// - Throws: ``PersistenceError`` — `unknownEntity` unless both schemas have the entity, `unknownAttribute`
    ///   unless the old schema has `oldName` and the new one `newName`, `invalidArgument` when `oldName` is still
    ///   in the new schema, `newName` was already in the old one, the types differ, or the entity's objects were
    ///   already touched.
    public func renameProperty(onType entity: String, from oldName: String, to newName: String) throws {
        try checkOpen()
        let pass = try run.entity(entity)
        guard let old = pass.old?.entity, let new = pass.new?.entity else {
            throw PersistenceError(
                .unknownEntity, "renameProperty needs '\(entity)' in both the stored schema and the model")
        }
        // Declared in the model (`previousAttributeNames`) too: already applied, the same on every backend.
        if pass.renamed[newName] == oldName { return }
        guard let oldAttribute = old.attribute(named: oldName) else {
            throw PersistenceError(.unknownAttribute, "the stored schema's '\(entity)' has no attribute '\(oldName)'")
        }
        guard let newAttribute = new.attribute(named: newName) else {
            throw PersistenceError(.unknownAttribute, "the model's '\(entity)' has no attribute '\(newName)'")
        }
        guard new.attribute(named: oldName) == nil, old.attribute(named: newName) == nil else {
            throw PersistenceError(
                .invalidArgument,
                "'\(entity).\(oldName)' can be renamed to '\(newName)' only when the model no longer has '\(oldName)' "
                    + "and the stored schema didn't have '\(newName)'")
        }
        guard oldAttribute.type == newAttribute.type else {
            throw PersistenceError(
                .invalidArgument,
                "'\(entity).\(oldName)' is \(oldAttribute.type.rawValue) and '\(newName)' is "
                    + "\(newAttribute.type.rawValue): convert the values in enumerateObjects instead")
        }
        guard pass.form == .old, !pass.isEnumerating, !pass.touched else {
            throw PersistenceError(
                .invalidArgument,
                "rename the attributes of '\(entity)' before enumerating, creating or deleting its objects")
        }
        guard !pass.renamed.values.contains(oldName), pass.renamed[newName] == nil else {
            throw PersistenceError(.invalidArgument, "'\(entity).\(oldName)' or '\(newName)' was already renamed")
        }
        pass.renamed[newName] = oldName
    }

    /// Deletes every object of an entity (of the old schema or the new); objects created afterwards are kept.
    /// - Returns: Whether there were objects to delete.
    /// - Throws: ``PersistenceError`` — `unknownEntity`, `invalidArgument` inside the entity's own enumeration.
    @discardableResult
    public func deleteData(forType entity: String) throws -> Bool {
        try checkOpen()
        return try run.deleteData(run.entity(entity))
    }

    /// Creates an object of an entity of the model, with these values by attribute name; attributes not given take
    /// their declared ``Entity/defaultValues`` default, else `nil`.
    ///
    /// The object is stored at once; values set on the returned object are stored as they are set, until the
    /// block returns.
    /// - Throws: ``PersistenceError`` — `unknownEntity` for an entity the model doesn't have, `unknownAttribute`,
    ///   `typeMismatch`, `invalidArgument` without a primary key, `duplicateKey`, `keyTooLarge`.
    @discardableResult
    public func create(_ entity: String, value: [String: Value] = [:]) throws -> MigrationObject {
        try checkOpen()
        let pass = try run.entity(entity)
        guard let layout = pass.new else {
            throw PersistenceError(.unknownEntity, "the model has no entity '\(entity)' to create objects of")
        }
        var values = layout.defaults.map { $0 ?? .null }
        for (name, given) in value.sorted(by: { $0.key < $1.key }) {
            let position = try layout.requirePosition(of: name)
            values[position] = try layout.entity.attributes[position].migrationValue(given, in: entity)
        }
        guard !values[layout.primaryKeyIndex].isNull else {
            throw PersistenceError(
                .invalidArgument, "an object of '\(entity)' needs its primary key '\(layout.entity.primaryKey)'")
        }
        try run.create(values, in: pass)
        return try MigrationObject(Record(layout: layout, values: values), role: .created, migration: self, pass: pass)
    }

    /// Creates an object of an entity of the model from Swift values by attribute name, stored the way entities
    /// store them — Realm's shape: `try migration.create("Pet", value: ["id": id, "owner": ownerID, "kind": "dog"])`.
    /// See ``create(_:value:)-(String,[String:Value])``.
    @discardableResult
    public func create(_ entity: String, value: [String: any ValueConvertible]) throws -> MigrationObject {
        try create(entity, value: value.mapValues { $0.storedValue } as [String: Value])
    }

    /// Creates an object from an instance of an entity type of the model.
    @discardableResult
    public func create<E: Entity>(_ object: E) throws -> MigrationObject {
        let record = try Record(encoding: object)
        let names = record.layout.names
        return try create(
            record.layout.entity.name,
            value: Dictionary(zip(names, record.values), uniquingKeysWith: { first, _ in first }))
    }

    /// Deletes an object of the new schema: one given to an enumeration's `body` as `new`, or one this migration
    /// created.
    /// - Throws: ``PersistenceError`` — `invalidArgument` for an object of the old schema (delete its new one),
    ///   `contextExpired` for an object whose closure returned.
    public func delete(_ object: MigrationObject) throws {
        try checkOpen()
        guard object.isWritable else {
            throw PersistenceError(
                .invalidArgument, "objects of the old schema can't be deleted; delete the new object instead")
        }
        _ = try object.value(of: object.record.layout.entity.primaryKey)  // throws once the object expired
        let pass = try run.entity(object.entityName)
        // The enumeration deletes the object it is visiting when the closure returns.
        if object.role == .created { try run.delete(created: object.record.primaryKey, in: pass) }
        object.markDeleted()
    }

    /// The layout values of `pass` come in: an enumeration hands old values only when there is an old layout, and
    /// new values only when there is a new one.
    private static func layout(_ layout: RecordLayout?, of pass: any MigrationEntityState) throws -> RecordLayout {
        guard let layout else { throw PersistenceError(.backend, "'\(pass.name)' has no layout for those values") }
        return layout
    }

    /// Ends the migration block: the migration and its objects can no longer be used.
    package func close() { isOpen = false }

    private func checkOpen() throws {
        guard isOpen else {
            throw PersistenceError(.contextExpired, "the migration was used after its migration block returned")
        }
        // A step that failed (a full map) ended the migration, even when the block caught its error.
        try run.checkUsable()
    }
}
