import Foundation

/// One object as a migration block sees it: a dynamic record of the old schema (read-only) or the new one
/// (writable).
///
/// Read values by attribute name — as a ``Value`` (`try old["age"]`) or typed (`try old.string("name")`, see
/// ``RecordReading``) — and write them on the new object with ``set(_:to:)-(String,Value)``. Names the schema
/// doesn't have throw ``PersistenceError/Code/unknownAttribute``. An object is valid until the closure it was
/// given to returns (an object from ``Migration/create(_:value:)-(_,[String:Value])``, until the migration block returns); using it
/// later throws ``PersistenceError/Code/contextExpired``.
public final class MigrationObject: RecordReading {
    enum Role {
        /// As stored before the migration.
        case old
        /// The new object of an enumeration: written when the closure returns.
        case enumerated
        /// Created by the migration block: written at once, and again on each change.
        case created
    }

    /// The object's values, in its schema's attribute order.
    public private(set) var record: Record
    /// Whether values can be set: `false` for objects of the old schema.
    public var isWritable: Bool { role != .old }
    let role: Role
    private let migration: Migration
    private let pass: any MigrationEntityState
    private var isExpired = false
    /// Whether ``set(_:to:)-(String,Value)`` changed a value.
    private(set) var isChanged = false
    /// Whether ``Migration/delete(_:)`` deleted the object.
    private(set) var isDeleted = false

    init(_ record: Record, role: Role, migration: Migration, pass: any MigrationEntityState) {
        self.record = record
        self.role = role
        self.migration = migration
        self.pass = pass
    }

    /// The name of the object's entity.
    public var entityName: String { record.layout.entity.name }

    /// The value of an attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for a name the object's schema doesn't have.
    public subscript(_ name: String) -> Value {
        get throws { try value(of: name) }
    }

    /// The value of an attribute.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for a name the object's schema doesn't have.
    public func value(of name: String) throws -> Value {
        try checkUsable()
        return try record.value(of: name)
    }

    /// Sets an attribute of a new object.
    ///
    /// `nil` is accepted for any attribute here; a non-optional attribute still `nil` when the migration ends fails
    /// it. The primary key can't change: create an object with the new key and delete this one.
    /// - Throws: ``PersistenceError`` — `readOnly` on an object of the old schema, `unknownAttribute`,
    ///   `typeMismatch` for a value the attribute's type can't hold, `invalidArgument` for a new primary key,
    ///   `contextExpired` after its closure returned.
    public func set(_ name: String, to value: Value) throws {
        try checkUsable()
        guard isWritable else {
            throw PersistenceError(
                .readOnly, "objects of the old schema are read-only; set '\(name)' on the new object")
        }
        let position = try record.layout.requirePosition(of: name)
        let attribute = record.layout.entity.attributes[position]
        guard position != record.layout.primaryKeyIndex || value == record.primaryKey else {
            throw PersistenceError(
                .invalidArgument,
                "the primary key of '\(entityName)' can't change in a migration; create an object with the new "
                    + "key and delete this one")
        }
        record.values[position] = try attribute.migrationValue(value, in: entityName)
        isChanged = true
        pass.changedAttributes.insert(name)
        if role == .created { try migration.run.update(created: record.values, in: pass) }
    }

    /// Sets an attribute of a new object to a Swift value, stored the way entities store it (`nil` for `nil`).
    public func set(_ name: String, to value: some ValueConvertible) throws {
        try set(name, to: value.storedValue)
    }

    /// Decodes the object as an entity type whose schema it has.
    /// - Throws: ``PersistenceError/Code/typeMismatch`` when a value doesn't fit.
    public func decode<E: Entity>(as type: E.Type = E.self) throws -> E {
        try checkUsable()
        return try record.decode(as: E.self)
    }

    /// Ends the object's use: after its closure, or after the migration block.
    func expire() { isExpired = true }

    /// Marks the object deleted (the migration deletes its record).
    func markDeleted() {
        isDeleted = true
        isExpired = true
    }

    private func checkUsable() throws {
        guard !isExpired, migration.isOpen else {
            throw PersistenceError(
                .contextExpired,
                isDeleted
                    ? "a migration object of '\(entityName)' was used after it was deleted"
                    : "a migration object of '\(entityName)' was used after its closure or the migration ended")
        }
    }
}
