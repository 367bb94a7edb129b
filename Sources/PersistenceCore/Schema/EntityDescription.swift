/// The schema of one entity: its name, attributes, primary key and indexes.
///
/// Derived from an ``Entity`` type with ``init(describing:)``; backends store it with the data so they can tell
/// when the model has changed, and migrations read old records through the description that wrote them.
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name in the store.
    public var name: String
    /// The attributes, in the order the type decodes them.
    public var attributes: [AttributeDescription]
    /// The name of the primary-key attribute.
    public var primaryKey: String
    /// Secondary indexes and unique constraints.
    public var indexes: [Index]
    /// Relationships to other entities (``Entity/relationships``), with their delete rules resolved.
    public var relationships: [Relationship]
    /// Full-text indexes (``Entity/fullTextIndexes``).
    public var fullTextIndexes: [FullTextIndex]
    /// Attributes that hold vectors of a fixed dimension (``Entity/vectorAttributes``).
    public var vectorAttributes: [VectorAttribute]

    /// Creates a description and checks that it is consistent.
    /// - Throws: ``PersistenceError`` with ``PersistenceError/Code/invalidSchema`` or
    ///   ``PersistenceError/Code/unknownAttribute`` when a name is empty or repeated, the primary key is missing or
    ///   optional, an index names an unknown attribute, or a relationship is malformed (see
    ///   ``Relationship``); whether relationships fit their targets is checked with the whole model.
    public init(
        name: String, attributes: [AttributeDescription], primaryKey: String, indexes: [Index] = [],
        relationships: [Relationship] = [], fullTextIndexes: [FullTextIndex] = [],
        vectorAttributes: [VectorAttribute] = []
    ) throws {
        self.name = name
        self.attributes = attributes
        self.primaryKey = primaryKey
        self.indexes = indexes
        self.relationships = relationships
        self.fullTextIndexes = fullTextIndexes
        self.vectorAttributes = vectorAttributes
        try validate()
        try validateRelationships()
        try validateFullTextIndexes()
        try validateVectorAttributes()
    }

    private enum CodingKeys: String, CodingKey {
        case name, attributes, primaryKey, indexes, relationships, fullTextIndexes, vectorAttributes
    }

    /// Decodes a stored description; one stored before relationships, full-text indexes or vectors existed has
    /// none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        attributes = try container.decode([AttributeDescription].self, forKey: .attributes)
        primaryKey = try container.decode(String.self, forKey: .primaryKey)
        indexes = try container.decode([Index].self, forKey: .indexes)
        relationships = try container.decodeIfPresent([Relationship].self, forKey: .relationships) ?? []
        fullTextIndexes = try container.decodeIfPresent([FullTextIndex].self, forKey: .fullTextIndexes) ?? []
        vectorAttributes = try container.decodeIfPresent([VectorAttribute].self, forKey: .vectorAttributes) ?? []
    }

    /// Encodes the description; without relationships, full-text indexes or vectors it encodes as one stored before
    /// they existed did.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(primaryKey, forKey: .primaryKey)
        try container.encode(indexes, forKey: .indexes)
        if !relationships.isEmpty { try container.encode(relationships, forKey: .relationships) }
        if !fullTextIndexes.isEmpty { try container.encode(fullTextIndexes, forKey: .fullTextIndexes) }
        if !vectorAttributes.isEmpty { try container.encode(vectorAttributes, forKey: .vectorAttributes) }
    }

    /// The attribute with this name, if there is one.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship with this name, if there is one.
    public func relationship(named name: String) -> Relationship? {
        relationships.first { $0.name == name }
    }

    /// The primary-key attribute.
    public var primaryKeyAttribute: AttributeDescription? { attribute(named: primaryKey) }

    /// Prefixes no entity name may begin with (in any case): the library's own tables' and SQLite's.
    package static let reservedPrefixes = ["persistence_", "sqlite_"]

    /// The entities of the library's own features, named with a reserved prefix so that no user entity can take
    /// their names: sync's journal (`PersistenceSync`'s `Model.synced()`).
    package static let libraryEntities: Set<String> = ["persistence_sync_records", "persistence_sync_client"]

    private func validate() throws {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw PersistenceError(.invalidSchema, "an entity name must be non-empty text without NUL characters")
        }
        // The library's own tables and SQLite's are named with these prefixes (`persistence_metadata`, a migration's
        // `persistence_new_…`): an entity named so could collide with one of them, on one backend and not another.
        // The entities of the library's own features (sync's journal) are named so on purpose.
        let lowercased = name.lowercased()
        if !Self.libraryEntities.contains(name),
            let prefix = Self.reservedPrefixes.first(where: { lowercased.hasPrefix($0) })
        {
            throw PersistenceError(
                .invalidSchema,
                "entity '\(name)' begins with '\(prefix)', which names the library's own tables; choose another name")
        }
        guard !attributes.isEmpty else {
            throw PersistenceError(.invalidSchema, "entity '\(name)' has no attributes")
        }
        var seen = Set<String>()
        for attribute in attributes {
            guard !attribute.name.isEmpty, !attribute.name.utf8.contains(0) else {
                throw PersistenceError(.invalidSchema, "entity '\(name)' has an empty or NUL-containing attribute name")
            }
            guard seen.insert(attribute.name).inserted else {
                throw PersistenceError(.invalidSchema, "entity '\(name)' declares attribute '\(attribute.name)' twice")
            }
        }
        guard let key = attribute(named: primaryKey) else {
            throw PersistenceError(
                .invalidSchema, "entity '\(name)' has no attribute '\(primaryKey)' for its primary key")
        }
        guard !key.isOptional else {
            throw PersistenceError(.invalidSchema, "the primary key '\(primaryKey)' of entity '\(name)' is optional")
        }
        guard [.integer, .string, .uuid].contains(key.type) else {
            throw PersistenceError(
                .invalidSchema,
                "the primary key '\(primaryKey)' of entity '\(name)' must be an integer, a string or a UUID")
        }
        for index in indexes {
            guard !index.attributes.isEmpty else {
                throw PersistenceError(.invalidSchema, "an index of entity '\(name)' names no attributes")
            }
            for attribute in index.attributes where !seen.contains(attribute) {
                throw PersistenceError(
                    .unknownAttribute, "an index of entity '\(name)' names unknown attribute '\(attribute)'")
            }
        }
    }

    /// Checks what a relationship declaration can be checked for without its target: names, the foreign key, the
    /// rule. ``ModelGraph`` checks the rest against the model.
    private func validateRelationships() throws {
        var names = Set(attributes.map(\.name))
        for relationship in relationships {
            let label = "relationship '\(name).\(relationship.name)'"
            guard !relationship.name.isEmpty, names.insert(relationship.name).inserted else {
                throw PersistenceError(
                    .invalidSchema, "\(label) is unnamed or its name is taken by another attribute or relationship")
            }
            guard !relationship.target.isEmpty else {
                throw PersistenceError(.invalidSchema, "\(label) names no target entity")
            }
            switch relationship.kind {
            case .toOne:
                guard relationship.inverse == nil else {
                    throw PersistenceError(
                        .invalidSchema,
                        "\(label) is a to-one: its inverse is the to-many that names it, not a name here")
                }
                guard let foreignKey = relationship.foreignKey, let key = attribute(named: foreignKey) else {
                    throw PersistenceError(
                        .unknownAttribute,
                        "\(label) names foreign key '\(relationship.foreignKey ?? "")', which is not an attribute")
                }
                guard [.integer, .string, .uuid].contains(key.type) else {
                    throw PersistenceError(
                        .invalidSchema,
                        "the foreign key '\(foreignKey)' of \(label) must be an integer, a string or a UUID")
                }
                if relationship.deleteRule == .nullify, !key.isOptional {
                    throw PersistenceError(
                        .invalidSchema,
                        "\(label) nullifies on delete, but its foreign key '\(foreignKey)' is not optional: make it optional or choose cascade, deny or noAction"
                    )
                }
            case .toMany, .manyToMany:
                guard relationship.foreignKey == nil, relationship.deleteRule == nil,
                    let inverse = relationship.inverse, !inverse.isEmpty
                else {
                    let kind = relationship.kind == .toMany ? "a to-many" : "a many-to-many"
                    throw PersistenceError(
                        .invalidSchema,
                        "\(label) is \(kind): it names its inverse and has neither foreign key nor delete rule")
                }
            }
        }
    }
}
