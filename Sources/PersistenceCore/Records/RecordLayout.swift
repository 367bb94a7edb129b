/// The shape of a record: an entity description with its attributes indexed by name.
///
/// Shared (by reference) among every record of one entity, so a record is only its array of values.
public final class RecordLayout: Sendable {
    /// The entity this layout describes.
    public let entity: EntityDescription
    /// Attribute names in storage order.
    public let names: [String]
    /// Attribute types in storage order.
    public let types: [AttributeType]
    /// The position of the primary key among ``names``.
    public let primaryKeyIndex: Int
    /// The declared default of each attribute (``Entity/defaultValues``), in storage order; `nil` where none.
    public let defaults: [Value?]
    /// The entity's name in the previous model version (``Entity/previousName``), when it was renamed.
    public let previousName: String?
    /// Renamed attributes' names in the previous model version, by current name (``Entity/previousAttributeNames``).
    public let previousAttributeNames: [String: String]
    /// The position of the stamp attribute (``Entity/stampAttribute``), when the entity declares one.
    public let stampIndex: Int?
    /// The entity's full-text indexes, their attributes resolved (``EntityDescription/fullTextIndexes``).
    @_spi(PersistenceBackend) public let fullTextIndexes: [FullTextIndexLayout]
    /// The entity's vector attributes, resolved (``EntityDescription/vectorAttributes``).
    @_spi(PersistenceBackend) public let vectors: [VectorLayout]
    @usableFromInline let positions: [String: Int]

    /// Creates the layout of an entity.
    /// - Parameters:
    ///   - entity: The entity's description.
    ///   - defaults: Values for attributes added by a migration, by attribute name (see ``Entity/defaultValues``);
    ///     names that are not attributes are ignored here and refused when a model is built.
    ///   - previousName: The entity's name in the previous model version, when it was renamed.
    ///   - previousAttributeNames: Renamed attributes' previous names, by current name.
    ///   - stampAttribute: The attribute that stamps a record's freshness; `nil` (or a name that is not an attribute)
    ///     for none (a model refuses unknown names).
    public init(
        _ entity: EntityDescription, defaults: [String: Value] = [:], previousName: String? = nil,
        previousAttributeNames: [String: String] = [:], stampAttribute: String? = nil
    ) {
        self.entity = entity
        self.defaults = entity.attributes.map { defaults[$0.name] }
        self.previousName = previousName
        self.previousAttributeNames = previousAttributeNames
        names = entity.attributes.map(\.name)
        types = entity.attributes.map(\.type)
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() { positions[name] = index }
        self.positions = positions
        primaryKeyIndex = positions[entity.primaryKey] ?? 0
        stampIndex = stampAttribute.flatMap { positions[$0] }
        fullTextIndexes = entity.fullTextIndexes.map { index in
            FullTextIndexLayout(index, entity: entity.name, positions: index.attributes.compactMap { positions[$0] })
        }
        vectors = entity.vectorAttributes.compactMap { vector in
            positions[vector.attribute].map {
                VectorLayout(position: $0, dimensions: vector.dimensions, name: vector.attribute)
            }
        }
    }

    /// The position of an attribute, or `nil` when the entity has no such attribute.
    @inline(__always)
    public func position(of name: String) -> Int? { positions[name] }

    /// The position of an attribute, trying `expected` first: coders visit attributes in declaration order, so
    /// the guess is nearly always right and saves a hash of the name.
    @inlinable
    func position(of name: String, expected: Int) -> Int? {
        if expected < names.count, names[expected] == name { return expected }
        return positions[name]
    }

    /// The position of an attribute, or an ``PersistenceError/Code/unknownAttribute`` error.
    public func requirePosition(of name: String) throws -> Int {
        guard let position = positions[name] else {
            throw PersistenceError(.unknownAttribute, "entity '\(entity.name)' has no attribute '\(name)'")
        }
        return position
    }

    /// Checks declared defaults against the entity: each names an attribute and fits its type.
    /// - Throws: ``PersistenceError/Code/invalidSchema`` naming the entity and attribute.
    package static func validatingDefaults(_ defaults: [String: Value], of entity: EntityDescription) throws {
        for (name, value) in defaults.sorted(by: { $0.key < $1.key }) {
            guard let attribute = entity.attribute(named: name) else {
                throw PersistenceError(
                    .invalidSchema, "entity '\(entity.name)' declares a default for unknown attribute '\(name)'")
            }
            guard attribute.accepts(value) else {
                throw PersistenceError(
                    .invalidSchema,
                    "the default of '\(entity.name).\(name)' is \(value.storageClassName), not a \(attribute.type.rawValue)"
                )
            }
        }
    }

    /// Checks declared renames against the entity: each key names an attribute, and no two name the same old one.
    /// - Throws: ``PersistenceError/Code/invalidSchema`` naming the entity and attribute.
    package static func validatingPreviousNames(_ names: [String: String], of entity: EntityDescription) throws {
        var old = Set<String>()
        for (name, previous) in names.sorted(by: { $0.key < $1.key }) {
            guard entity.attribute(named: name) != nil else {
                throw PersistenceError(
                    .invalidSchema, "entity '\(entity.name)' declares a previous name for unknown attribute '\(name)'")
            }
            guard !previous.isEmpty, old.insert(previous).inserted else {
                throw PersistenceError(
                    .invalidSchema,
                    "entity '\(entity.name)' declares the previous name of '\(name)' empty or for two attributes")
            }
        }
    }

    /// Checks a declared stamp attribute: it names an attribute of the entity, a date or an integer, and not the
    /// primary key.
    /// - Throws: ``PersistenceError/Code/invalidSchema`` naming the entity and attribute.
    package static func validatingStamp(_ name: String, of entity: EntityDescription) throws {
        guard !name.isEmpty else { return }
        guard let attribute = entity.attribute(named: name) else {
            throw PersistenceError(
                .invalidSchema, "entity '\(entity.name)' declares unknown attribute '\(name)' as its stamp")
        }
        guard attribute.type == .date || attribute.type == .integer, name != entity.primaryKey else {
            throw PersistenceError(
                .invalidSchema,
                "the stamp of '\(entity.name)', '\(name)', must be a date or an integer other than the primary key")
        }
    }
}
