import Foundation

/// One link of a many-to-many relationship (``Relationship/manyToMany(_:_:inverse:)``): the join entity the model
/// adds for each pair of entities with a many-to-many between them, and the library manages.
///
/// Its records hold the primary keys of the two linked records — `sourceID` of the entity whose name sorts first
/// (for a many-to-many of an entity with itself, of the side whose relationship name sorts first), `targetID` of the
/// other — and a primary key made of both, so a pair is linked at most once. Both keys are to-ones that cascade:
/// deleting a record on either side deletes its links. The entity is named `Source_Target` (`Post_Tag`); it is an
/// entity like any other — query it, count it, observe it — but write it through ``DatabaseContext/link(_:_:_:)``
/// and ``DatabaseContext/unlink(_:_:_:)``, which know which side is which.
public struct ManyToManyLink<Source: Entity, Target: Entity>: Entity, Hashable {
    /// Both keys, as one text: what makes a pair unique.
    public var id: String
    /// The primary key of the linked `Source` record.
    public var sourceID: Source.ID
    /// The primary key of the linked `Target` record.
    public var targetID: Target.ID

    /// The link between the `Source` record with primary key `sourceID` and the `Target` record with `targetID`.
    public init(sourceID: Source.ID, targetID: Target.ID) {
        self.sourceID = sourceID
        self.targetID = targetID
        id = Self.key(sourceID.storedValue, targetID.storedValue)
    }

    public static var entityName: String { ManyToManyLinks.entityName(Source.entityName, Target.entityName) }

    public static var relationships: [Relationship] {
        [
            .toOne("source", Source.self, foreignKey: "sourceID", onDelete: .cascade),
            .toOne("target", Target.self, foreignKey: "targetID", onDelete: .cascade),
        ]
    }

    /// The primary key of the link between two keys: the first key's text prefixed by its length in bytes, then the
    /// second's — so no two pairs share one.
    static func key(_ source: Value, _ target: Value) -> String {
        let first = text(source)
        return "\(first.utf8.count):\(first)\(text(target))"
    }

    private static func text(_ value: Value) -> String {
        switch value {
        case .null: ""
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob(let data): data.base64EncodedString()
        }
    }
}

/// The rules of many-to-many links: which entity is the source, what the join entity is named, which of its keys a
/// relationship's records go in.
enum ManyToManyLinks {
    /// The join entity's name for a source and a target entity.
    static func entityName(_ source: String, _ target: String) -> String { "\(source)_\(target)" }

    /// Whether `relationship`, a many-to-many of `entity`, is the source side of its links: its entity's name sorts
    /// first (by UTF-8 bytes), or, between an entity and itself, its name sorts before its inverse's.
    static func isSource(_ relationship: Relationship, of entity: String) -> Bool {
        if entity != relationship.target { return entity.utf8.lexicographicallyPrecedes(relationship.target.utf8) }
        return relationship.name.utf8.lexicographicallyPrecedes((relationship.inverse ?? "").utf8)
    }

    /// The join entity's name for a many-to-many of `entity`.
    static func entityName(of relationship: Relationship, of entity: String) -> String {
        isSource(relationship, of: entity)
            ? entityName(entity, relationship.target) : entityName(relationship.target, entity)
    }

    /// The join entity's attributes for a many-to-many of `entity`: the one holding this side's keys, and the other.
    static func keys(of relationship: Relationship, of entity: String) -> (near: String, far: String) {
        isSource(relationship, of: entity) ? ("sourceID", "targetID") : ("targetID", "sourceID")
    }

    /// The join entity types the many-to-manys of `entities` need, each once, in the order first declared.
    static func linkTypes(of entities: [any Entity.Type]) -> [any Entity.Type] {
        var names = Set<String>()
        var links: [any Entity.Type] = []
        for entity in entities {
            for relationship in entity.relationships where relationship.kind == .manyToMany {
                guard let target = relationship.targetType, isSource(relationship, of: entity.entityName) else {
                    continue
                }
                let link = linkType(entity, target)
                if names.insert(link.entityName).inserted { links.append(link) }
            }
        }
        return links
    }

    private static func linkType<S: Entity, T: Entity>(_ source: S.Type, _ target: T.Type) -> any Entity.Type {
        ManyToManyLink<S, T>.self
    }

    /// The join entity type of a many-to-many of `entity` leading to `target`.
    static func linkType<E: Entity, T: Entity>(
        of relationship: Relationship, _ entity: E.Type, _ target: T.Type
    ) -> any Entity.Type {
        isSource(relationship, of: E.entityName) ? ManyToManyLink<E, T>.self : ManyToManyLink<T, E>.self
    }
}
