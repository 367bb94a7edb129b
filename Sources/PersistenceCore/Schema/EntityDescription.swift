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

    /// Creates a description and checks that it is consistent.
    /// - Throws: ``PersistenceError`` with ``PersistenceError/Code/invalidSchema`` or
    ///   ``PersistenceError/Code/unknownAttribute`` when a name is empty or repeated, the primary key is missing or
    ///   optional, or an index names an unknown attribute.
    public init(name: String, attributes: [AttributeDescription], primaryKey: String, indexes: [Index] = []) throws {
        self.name = name
        self.attributes = attributes
        self.primaryKey = primaryKey
        self.indexes = indexes
        try validate()
    }

    /// The attribute with this name, if there is one.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The primary-key attribute.
    public var primaryKeyAttribute: AttributeDescription? { attribute(named: primaryKey) }

    /// Prefixes no entity name may begin with (in any case): the library's own tables' and SQLite's.
    package static let reservedPrefixes = ["persistence_", "sqlite_"]

    private func validate() throws {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw PersistenceError(.invalidSchema, "an entity name must be non-empty text without NUL characters")
        }
        // The library's own tables and SQLite's are named with these prefixes (`persistence_metadata`, a migration's
        // `persistence_new_…`): an entity named so could collide with one of them, on one backend and not another.
        let lowercased = name.lowercased()
        if let prefix = Self.reservedPrefixes.first(where: { lowercased.hasPrefix($0) }) {
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
}
