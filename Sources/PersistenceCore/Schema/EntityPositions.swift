/// Where each entity of a model sits in the model, found by the entity's type: a backend keeps what it has for each
/// entity (a table mapping, an entity store) in an array in model order and finds it here.
///
/// Typed operations look their entity up on every call, so this is on the hot path of a point lookup: up to
/// ``linearSearchLimit`` entities it compares type identities one by one, which costs less than hashing one. It also
/// tells the ``ReadTracker`` of an observed read which entities the read uses (one atomic load when none tracks).
package struct EntityPositions: Sendable {
    /// The entity types, in model order.
    private let types: [ObjectIdentifier]
    private let byType: [ObjectIdentifier: Int]
    /// The most entities searched one by one.
    package static var linearSearchLimit: Int { 16 }

    package init(_ model: Model) {
        types = model.entities.map { ObjectIdentifier($0) }
        var byType: [ObjectIdentifier: Int] = [:]
        for (position, type) in types.enumerated() { byType[type] = position }
        self.byType = byType
    }

    /// The position of `type` in the model.
    /// - Throws: ``PersistenceError/Code/unknownEntity`` when the type is not part of the model.
    package func position(of type: any Entity.Type) throws -> Int {
        // Every typed read of every backend comes through here: an observed read learns what it depends on.
        ReadTracker.noteEntity(type)
        let wanted = ObjectIdentifier(type)
        if types.count <= Self.linearSearchLimit {
            for position in types.indices where types[position] == wanted { return position }
        } else if let position = byType[wanted] {
            return position
        }
        throw PersistenceError(.unknownEntity, "\(type) is not part of this database's model")
    }
}
