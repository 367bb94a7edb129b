/// A versioned set of entity types: what a database stores.
///
/// ```swift
/// enum AppModel {
///     static let current = Model(version: 1, entities: [User.self, Post.self])
/// }
/// ```
public struct Model: Sendable {
    /// The model's version; stored with the data.
    public var version: Int
    /// The entity types, in the order their tables are created: those given, then the join entities of their
    /// many-to-many relationships (``ManyToManyLink``), which setting the property adds again.
    public var entities: [any Entity.Type] {
        get { storedEntities }
        set { storedEntities = Self.withLinks(newValue) }
    }

    private var storedEntities: [any Entity.Type]

    /// What runs before each write transaction of the model's stores commits (``WillCommitHook``): features' part in
    /// writes (sync's journal), carried by the model so every process that opens a store with it runs them.
    package var hooks: [any WillCommitHook] = []

    /// Creates a model of `entities` and the join entities their many-to-many relationships need.
    public init(version: Int = 1, entities: [any Entity.Type]) {
        self.version = version
        storedEntities = Self.withLinks(entities)
    }

    /// `entities` and the join entities of their many-to-manys that aren't among them.
    private static func withLinks(_ entities: [any Entity.Type]) -> [any Entity.Type] {
        let given = Set(entities.map { ObjectIdentifier($0) })
        return entities + ManyToManyLinks.linkTypes(of: entities).filter { !given.contains(ObjectIdentifier($0)) }
    }

    /// The descriptions of the model's entities, checked for duplicate names and for relationships that fit their
    /// targets (``Relationship``).
    /// - Throws: ``PersistenceError/Code/invalidSchema`` when a type can't be described, two share a name, or a
    ///   relationship doesn't fit its target.
    public func layouts() throws -> [RecordLayout] {
        let layouts = try describedLayouts()
        _ = try ModelGraph(model: self, layouts: layouts)
        return layouts
    }

    /// The descriptions of the model's entities, checked for duplicate names (not for relationships).
    func describedLayouts() throws -> [RecordLayout] {
        var names = Set<String>()
        return try entities.map { type in
            let layout = try SchemaCache.layout(for: type)
            guard names.insert(layout.entity.name).inserted else {
                throw PersistenceError(.invalidSchema, "two entities are named '\(layout.entity.name)'")
            }
            return layout
        }
    }
}
