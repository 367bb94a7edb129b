package import PersistenceCore

/// What an SQL engine's catalog says of one column of an entity's table.
package struct CatalogColumn: Sendable {
    /// The declared type, as the backend's table mapping writes it (compared as given).
    package var type: String
    package var notNull: Bool
    /// Whether the column is (part of) the primary key.
    package var isKey: Bool

    package init(type: String, notNull: Bool, isKey: Bool) {
        self.type = type
        self.notNull = notNull
        self.isKey = isKey
    }
}

/// What an SQL engine's catalog says of one index of an entity's table (the primary key's excluded).
package struct CatalogIndex: Sendable {
    package var isUnique: Bool
    /// The indexed columns, in order.
    package var columns: [String]

    package init(isUnique: Bool, columns: [String]) {
        self.isUnique = isUnique
        self.columns = columns
    }
}

extension VerificationProblem {
    /// The problems of an entity's table as the catalog describes it, the same on every SQL backend: a missing table
    /// or column, a column's type, `NOT NULL` or primary key unlike its attribute, a column the model doesn't
    /// declare; and the positions of the attributes that have a column (their values can be checked).
    /// - Parameter columnType: The type the backend declares for an attribute's column.
    package static func tableProblems(
        _ columns: [String: CatalogColumn], of entity: EntityDescription, columnType: (AttributeType) -> String
    ) -> (problems: [VerificationProblem], present: [Int]) {
        var problems: [VerificationProblem] = []
        func mismatch(_ message: String, attribute: String? = nil) {
            problems.append(
                VerificationProblem(.schemaMismatch, entity: entity.name, attribute: attribute, message: message))
        }
        guard !columns.isEmpty else {
            mismatch("the table of '\(entity.name)' is missing")
            return (problems, [])
        }
        var columns = columns
        var present: [Int] = []
        for (position, attribute) in entity.attributes.enumerated() {
            guard let column = columns.removeValue(forKey: attribute.name) else {
                mismatch("the table has no column for attribute '\(attribute.name)'", attribute: attribute.name)
                continue
            }
            present.append(position)
            let isKey = attribute.name == entity.primaryKey
            if column.type != columnType(attribute.type) {
                mismatch("column '\(attribute.name)' is declared \(column.type)", attribute: attribute.name)
            }
            if column.notNull != (isKey || !attribute.isOptional) {
                mismatch(
                    "column '\(attribute.name)' is \(column.notNull ? "" : "not ")NOT NULL, unlike its attribute",
                    attribute: attribute.name)
            }
            if column.isKey != isKey {
                mismatch(
                    "column '\(attribute.name)' is \(column.isKey ? "" : "not ")the primary key, unlike its attribute",
                    attribute: attribute.name)
            }
        }
        for name in columns.keys.sorted() {
            mismatch("the table has a column '\(name)' that the model does not declare")
        }
        return (problems, present)
    }

    /// The problems of an entity's indexes as the catalog describes them: a declared index missing, unique or not
    /// unlike the model, on other columns; an undeclared unique index (it refuses writes the model allows — other
    /// extra indexes only speed up queries).
    package static func indexProblems(_ found: [String: CatalogIndex], of entity: EntityDescription)
        -> [VerificationProblem]
    {
        var problems: [VerificationProblem] = []
        var found = found
        for index in entity.indexes {
            let name = index.name(in: entity.name)
            func mismatch(_ message: String) {
                problems.append(
                    VerificationProblem(.schemaMismatch, entity: entity.name, index: name, message: message))
            }
            guard let stored = found.removeValue(forKey: name) else {
                mismatch("the index is missing")
                continue
            }
            if stored.isUnique != index.isUnique {
                mismatch("the index is \(stored.isUnique ? "" : "not ")unique, unlike the model")
            }
            if stored.columns != index.attributes { mismatch("the index is on other columns than the model declares") }
        }
        for (name, index) in found.sorted(by: { $0.key < $1.key }) where index.isUnique {
            problems.append(
                VerificationProblem(
                    .schemaMismatch, entity: entity.name, index: name,
                    message: "a unique index the model does not declare constrains the table"))
        }
        return problems
    }
}
