/// What changed between the schema stored with the data and the current model, by entity and attribute names.
///
/// Every backend (SQLite, LMDB, PostgreSQL) describes a changed schema with it, by names, never values: in the error
/// that asks for a migration, **before any change**, and in a migration's report (PersistenceSQL's
/// `MigrationStepPlan` for the SQL backends). LMDB's migrations also decide from it what can happen without the
/// user's code and what blocks them.
package struct SchemaDifference: Sendable {
    /// The changes to one entity present in both schemas.
    package struct EntityChange: Sendable {
        /// The entity's name.
        package var name: String
        /// The stored description (the old schema).
        package var stored: EntityDescription
        /// The current description (the new schema).
        package var current: EntityDescription
        /// Attributes only the current schema has.
        package var addedAttributes: [AttributeDescription]
        /// Attributes only the stored schema has.
        package var removedAttributes: [AttributeDescription]
        /// Attributes in both whose type changed: (name, stored type, current type).
        package var retypedAttributes: [(name: String, from: AttributeType, to: AttributeType)]
        /// Attributes in both that were optional and no longer are.
        package var nowRequired: [String]
        /// Attributes in both that became optional.
        package var nowOptional: [String]
        /// Indexes whose definition is new or changed (to build).
        package var addedIndexes: [Index]
        /// Indexes that are gone or changed (to drop).
        package var removedIndexes: [Index]
        /// Full-text indexes whose definition is new or changed (to build).
        package var addedFullTextIndexes: [FullTextIndex] = []
        /// Full-text indexes that are gone or changed (to drop).
        package var removedFullTextIndexes: [FullTextIndex] = []
        /// Whether the primary key attribute changed.
        package var primaryKeyChanged: Bool
        /// Relationships declared, removed or changed (their target, foreign key, inverse or delete rule), by name.
        package var changedRelationships: [String] = []
        /// Vector attributes declared, no longer declared or of other dimensions: (attribute, current dimensions
        /// or `nil` when no longer a vector).
        package var changedVectors: [(attribute: String, dimensions: Int?)] = []

        /// Whether stored records must be rewritten (their attributes changed), as opposed to indexes only.
        package var changesRecords: Bool {
            !addedAttributes.isEmpty || !removedAttributes.isEmpty || !retypedAttributes.isEmpty
                || !nowRequired.isEmpty || primaryKeyChanged
        }

        /// Whether anything changed.
        package var isEmpty: Bool {
            !changesRecords && nowOptional.isEmpty && addedIndexes.isEmpty && removedIndexes.isEmpty
                && changedRelationships.isEmpty && addedFullTextIndexes.isEmpty && removedFullTextIndexes.isEmpty
                && changedVectors.isEmpty
        }
    }

    /// Entities only the current model has.
    package var addedEntities: [EntityDescription]
    /// Entities only the stored schema has.
    package var removedEntities: [EntityDescription]
    /// Entities in both that changed.
    package var changedEntities: [EntityChange]

    /// Whether the stored schema equals the model (attribute and index order aside).
    package var isEmpty: Bool { addedEntities.isEmpty && removedEntities.isEmpty && changedEntities.isEmpty }

    /// Compares a stored schema with the current one.
    package init(stored: [EntityDescription], current: [EntityDescription]) {
        let old = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let currentNames = Set(current.map(\.name))
        addedEntities = current.filter { old[$0.name] == nil }
        removedEntities = stored.filter { !currentNames.contains($0.name) }
        changedEntities = current.compactMap { entity in
            old[entity.name].map { Self.change(from: $0, to: entity) }.flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    private static func change(from stored: EntityDescription, to current: EntityDescription) -> EntityChange {
        let before = Dictionary(stored.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let afterNames = Set(current.attributes.map(\.name))
        var change = EntityChange(
            name: current.name, stored: stored, current: current,
            addedAttributes: current.attributes.filter { before[$0.name] == nil },
            removedAttributes: stored.attributes.filter { !afterNames.contains($0.name) },
            retypedAttributes: [], nowRequired: [], nowOptional: [], addedIndexes: [], removedIndexes: [],
            primaryKeyChanged: stored.primaryKey != current.primaryKey)
        for attribute in current.attributes {
            guard let old = before[attribute.name] else { continue }
            if old.type != attribute.type {
                change.retypedAttributes.append((attribute.name, old.type, attribute.type))
            }
            if old.isOptional && !attribute.isOptional { change.nowRequired.append(attribute.name) }
            if !old.isOptional && attribute.isOptional { change.nowOptional.append(attribute.name) }
        }
        let oldIndexes = Set(stored.indexes)
        let newIndexes = Set(current.indexes)
        change.addedIndexes = current.indexes.filter { !oldIndexes.contains($0) }
        change.removedIndexes = stored.indexes.filter { !newIndexes.contains($0) }
        change.addedFullTextIndexes = current.fullTextIndexes.filter { !stored.fullTextIndexes.contains($0) }
        change.removedFullTextIndexes = stored.fullTextIndexes.filter { !current.fullTextIndexes.contains($0) }
        let oldVectors = Dictionary(
            stored.vectorAttributes.map { ($0.attribute, $0.dimensions) }, uniquingKeysWith: { first, _ in first })
        let newVectors = Dictionary(
            current.vectorAttributes.map { ($0.attribute, $0.dimensions) }, uniquingKeysWith: { first, _ in first })
        change.changedVectors = Set(oldVectors.keys).union(newVectors.keys).sorted()
            .filter { oldVectors[$0] != newVectors[$0] }.map { ($0, newVectors[$0]) }
        let oldRelationships = Dictionary(
            stored.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let newRelationships = Dictionary(
            current.relationships.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        change.changedRelationships = Set(oldRelationships.keys).union(newRelationships.keys)
            .filter { oldRelationships[$0] != newRelationships[$0] }.sorted()
        return change
    }

    /// How a clause about a full-text index begins.
    package static let fullTextIndexClause = "full-text index "

    /// The changes, one clause each, by entity, attribute and index names only (never values).
    package var clauses: [String] {
        var clauses: [String] = []
        for entity in addedEntities { clauses.append("entity '\(entity.name)' added") }
        for entity in removedEntities {
            clauses.append("entity '\(entity.name)' removed")
            for index in entity.fullTextIndexes {
                clauses.append(Self.fullTextIndexClause + "'\(index.name(in: entity.name))' removed")
            }
        }
        for change in changedEntities {
            let name = change.name
            for attribute in change.addedAttributes { clauses.append("'\(name).\(attribute.name)' added") }
            for attribute in change.removedAttributes { clauses.append("'\(name).\(attribute.name)' removed") }
            for retyped in change.retypedAttributes {
                clauses.append(
                    "'\(name).\(retyped.name)' changed type from \(retyped.from.rawValue) to \(retyped.to.rawValue)")
            }
            for attribute in change.nowRequired { clauses.append("'\(name).\(attribute)' is no longer optional") }
            for attribute in change.nowOptional { clauses.append("'\(name).\(attribute)' became optional") }
            for index in change.addedIndexes { clauses.append("index '\(index.name(in: name))' added or changed") }
            for index in change.removedIndexes {
                clauses.append("index '\(index.name(in: name))' removed or changed")
            }
            for index in change.addedFullTextIndexes {
                clauses.append(Self.fullTextIndexClause + "'\(index.name(in: name))' added or changed")
            }
            for index in change.removedFullTextIndexes {
                clauses.append(Self.fullTextIndexClause + "'\(index.name(in: name))' removed or changed")
            }
            if change.primaryKeyChanged { clauses.append("the primary key of '\(name)' changed") }
            for vector in change.changedVectors {
                clauses.append(
                    vector.dimensions.map { "'\(name).\(vector.attribute)' is a vector of \($0) dimensions" }
                        ?? "'\(name).\(vector.attribute)' is no longer a vector")
            }
            for relationship in change.changedRelationships {
                clauses.append("relationship '\(name).\(relationship)' added, removed or changed")
            }
        }
        return clauses
    }

    /// ``clauses`` joined into one sentence.
    package var summary: String { clauses.joined(separator: "; ") }
}
