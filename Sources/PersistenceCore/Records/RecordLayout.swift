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
    private let positions: [String: Int]

    /// Creates the layout of an entity.
    public init(_ entity: EntityDescription) {
        self.entity = entity
        names = entity.attributes.map(\.name)
        types = entity.attributes.map(\.type)
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() { positions[name] = index }
        self.positions = positions
        primaryKeyIndex = positions[entity.primaryKey] ?? 0
    }

    /// The position of an attribute, or `nil` when the entity has no such attribute.
    @inline(__always)
    public func position(of name: String) -> Int? { positions[name] }

    /// The position of an attribute, trying `expected` first: coders visit attributes in declaration order, so
    /// the guess is nearly always right and saves a hash of the name.
    @inline(__always)
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
}
