/// What a backend gives a migration step's mapping code: lookups in the source and destination records, and
/// changes to destination records, inside the migration's transaction.
package protocol MappingStore: AnyObject {
    /// The source entity's layout, or `nil` when the step's source has no such entity.
    func sourceLayout(_ entity: String) -> RecordLayout?
    /// The destination entity's layout, or `nil` when the step's destination has no such entity.
    func destinationLayout(_ entity: String) -> RecordLayout?
    /// The record with this primary key, source or destination by `layout`.
    func record(_ layout: RecordLayout, source: Bool, key: Value) throws -> Record?
    /// The records matching a condition (all when `nil`), in primary-key order.
    func records(_ layout: RecordLayout, source: Bool, where condition: ResolvedCondition?) throws -> [Record]
    /// Inserts a destination record whose values are checked.
    func insert(_ record: Record) throws
    /// Replaces the destination record with the same primary key; returns whether there was one.
    func update(_ record: Record) throws -> Bool
    /// Deletes a destination record; returns whether there was one.
    func delete(_ layout: RecordLayout, key: Value) throws -> Bool
}

/// Lookups and changes available to mapping code during one migration step: the step's source records (the store
/// as it was before the step, read-only) and destination records (created by the step so far).
///
/// Records are dynamic ``Record``s in the step's source or destination schema, so no Swift type of an old version
/// is needed. A context is only valid while the step runs; using it later throws
/// ``PersistenceError/Code/contextExpired``.
public final class MappingContext {
    /// Weak: the backend's step owns the context.
    private weak var store: (any MappingStore)?
    /// The step's source model version.
    public let sourceVersion: Int
    /// The step's destination model version.
    public let destinationVersion: Int
    private var isOpen = true

    package init(store: any MappingStore, sourceVersion: Int, destinationVersion: Int) {
        self.store = store
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
    }

    /// Ends the context's use: after its step.
    package func close() { isOpen = false }

    private func openStore() throws -> any MappingStore {
        guard isOpen, let store else {
            throw PersistenceError(.contextExpired, "a mapping context was used after its migration step ended")
        }
        return store
    }

    private func layout(_ entity: String, source: Bool) throws -> RecordLayout {
        let store = try openStore()
        guard let layout = source ? store.sourceLayout(entity) : store.destinationLayout(entity) else {
            throw PersistenceError(
                .unknownEntity,
                "the \(source ? "source" : "destination") model (version \(source ? sourceVersion : destinationVersion)) "
                    + "of this migration step has no entity '\(entity)'")
        }
        return layout
    }

    // MARK: - Source records

    /// The source record of an entity with this primary key, or `nil`.
    /// - Throws: ``PersistenceError/Code/unknownEntity`` when the step's source has no such entity.
    public func sourceRecord(_ entity: String, id: some ValueConvertible) throws -> Record? {
        try openStore().record(layout(entity, source: true), source: true, key: id.storedValue)
    }

    /// The source records of an entity matching a condition (all when `nil`), in primary-key order.
    ///
    /// ```swift
    /// let items = try context.sourceRecords("Item", where: Field("orderID") == orderID)
    /// ```
    public func sourceRecords(_ entity: String, where condition: Condition? = nil) throws -> [Record] {
        let layout = try layout(entity, source: true)
        return try openStore().records(layout, source: true, where: condition?.resolve(in: layout))
    }

    // MARK: - Destination records

    /// The destination record of an entity with this primary key, or `nil` (created by this step so far, or kept
    /// from an entity the step doesn't change).
    public func destinationRecord(_ entity: String, id: some ValueConvertible) throws -> Record? {
        try openStore().record(layout(entity, source: false), source: false, key: id.storedValue)
    }

    /// The destination records of an entity matching a condition (all when `nil`), in primary-key order.
    public func destinationRecords(_ entity: String, where condition: Condition? = nil) throws -> [Record] {
        let layout = try layout(entity, source: false)
        return try openStore().records(layout, source: false, where: condition?.resolve(in: layout))
    }

    /// A new record of a destination entity: declared defaults (``Entity/defaultValues``) set, `nil` elsewhere.
    /// Set its values, then ``insert(_:)`` it.
    public func newRecord(_ entity: String) throws -> Record {
        let layout = try layout(entity, source: false)
        var record = Record(layout: layout)
        for (position, value) in layout.defaults.enumerated() { record.values[position] = value ?? .null }
        return record
    }

    /// Inserts a record into its destination entity.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a record not made by ``newRecord(_:)`` or a
    ///   destination lookup, ``PersistenceError/Code/typeMismatch`` naming an attribute whose value doesn't fit
    ///   (a `nil` in a non-optional one included), ``PersistenceError/Code/duplicateKey`` for a key already there.
    public func insert(_ record: Record) throws {
        try openStore().insert(checked(record))
    }

    /// Saves changes to a destination record (found by its primary key).
    /// - Throws: As ``insert(_:)``, and ``PersistenceError/Code/notFound`` when no record has its key.
    public func update(_ record: Record) throws {
        guard try openStore().update(checked(record)) else {
            throw PersistenceError(.notFound, "no destination '\(record.entityName)' record has that primary key")
        }
    }

    /// Deletes a destination record by primary key; returns whether there was one.
    @discardableResult
    public func deleteDestination(_ entity: String, id: some ValueConvertible) throws -> Bool {
        try openStore().delete(layout(entity, source: false), key: id.storedValue)
    }

    /// The record with every value as its destination attribute stores it.
    private func checked(_ record: Record) throws -> Record {
        let layout = try layout(record.entityName, source: false)
        guard record.layout === layout else {
            throw PersistenceError(
                .invalidArgument,
                "a '\(record.entityName)' record inserted or updated by a migration must be in the step's destination "
                    + "schema: make it with newRecord(_:) or a destination lookup")
        }
        var checked = record
        for (position, attribute) in layout.entity.attributes.enumerated() {
            checked.values[position] = try attribute.storedMigrationValue(
                record.values[position], in: layout.entity.name)
        }
        return checked
    }
}

/// The source record an attribute mapping or a custom policy is given: read it by attribute name, and look up
/// other records through ``context``.
///
/// ```swift
/// "fullName": .value { source in "\(try source.string("first") ?? "") \(try source.string("last") ?? "")" }
/// ```
public struct MappingSource: RecordReading {
    /// The source record, in the step's source schema.
    public let record: Record
    /// Lookups in other source and destination records.
    public let context: MappingContext

    package init(record: Record, context: MappingContext) {
        self.record = record
        self.context = context
    }

    /// The name of the source entity.
    public var entityName: String { record.entityName }

    /// The value of a source attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the source entity has no such attribute.
    public func value(of name: String) throws -> Value {
        guard let position = record.layout.position(of: name) else {
            throw PersistenceError(
                .unknownAttribute,
                "the source model (version \(context.sourceVersion)) of '\(entityName)' has no attribute '\(name)'")
        }
        return record.values[position]
    }

    /// The value of a source attribute (`try source["firstName"]`).
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` when the source entity has no such attribute.
    public subscript(_ name: String) -> Value {
        get throws { try value(of: name) }
    }
}
