extension AttributeDescription {
    /// `value` as the attribute stores it, for migration code to set: `nil` is accepted whatever the attribute (a
    /// non-optional one still `nil` fails when the migration ends).
    /// - Throws: `typeMismatch` naming the attribute when its type can't hold the value.
    package func migrationValue(_ value: Value, in entity: String) throws -> Value {
        if value.isNull { return .null }
        guard let stored = conforming(value) else {
            throw PersistenceError(
                .typeMismatch,
                "'\(entity).\(name)' is declared \(type.rawValue); a \(value.storageClassName) value can't be "
                    + "stored in it")
        }
        return stored
    }

    /// `value` as the attribute stores it, for a record a migration writes: like ``migrationValue(_:in:)``, and `nil`
    /// only in an optional attribute.
    /// - Throws: `typeMismatch` naming the attribute when it can't hold the value, `nil` included.
    package func storedMigrationValue(_ value: Value, in entity: String) throws -> Value {
        if value.isNull, !isOptional {
            throw PersistenceError(
                .typeMismatch, "'\(entity).\(name)' is not optional; a migrated record can't leave it nil")
        }
        return try migrationValue(value, in: entity)
    }
}
