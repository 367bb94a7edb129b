/// The relationships of a model, resolved to entity positions and attribute positions: what a write looks up to
/// check a foreign key or to apply delete rules, built once per database.
///
/// Building it checks what a single entity's description can't: each relationship's target is in the model, a
/// foreign key has the target's primary-key type, and a to-many's inverse is a to-one of its target that refers
/// back.
@_spi(PersistenceBackend) public final class ModelGraph: Sendable {
    /// A to-one of an entity: where its foreign key sits in the entity's records, and which entity it refers to.
    package struct Reference: Sendable {
        /// The relationship's name.
        package let name: String
        /// The foreign key's position in the entity's layout.
        package let foreignKey: Int
        /// The target entity's position in the model.
        package let target: Int
    }

    /// A to-one of some entity (this one included) that refers to an entity: who to visit when one of its records
    /// is deleted.
    package struct Referrer: Sendable {
        /// The referring entity's position in the model.
        package let source: Int
        /// The relationship's name.
        package let name: String
        /// The foreign key's position in the referring entity's layout.
        package let foreignKey: Int
        /// What deleting a referred record does to the referring ones.
        package let rule: DeleteRule
    }

    /// The model's entity types, in model order.
    package let types: [any Entity.Type]
    /// Their layouts, in model order.
    @_spi(PersistenceBackend) public let layouts: [RecordLayout]
    /// Finds an entity type's position.
    package let positions: EntityPositions
    /// Each entity's to-ones, by entity position.
    package let references: [[Reference]]
    /// The to-ones that refer to each entity, by entity position.
    package let referrers: [[Referrer]]
    /// Each entity's position by name.
    private let byName: [String: Int]
    /// Whether the model declares no relationship at all: then no write needs to look anything up.
    package let isEmpty: Bool
    /// By entity position: whether a cascade may delete the entity's records by a condition on their foreign key,
    /// without reading them — nothing refers to the entity, and none of its to-ones denies or nullifies, so no
    /// rule needs to know which of its records go.
    package let sweepable: [Bool]
    /// Whether an entity declares a full-text index: a write of a model without one never looks for changes to
    /// take into indexes.
    package let hasFullTextIndexes: Bool

    /// The layouts of a store read without its entity types (the store tool's, from the stored schema), their
    /// relationships left unresolved: a reader of records by position needs no rules, and a damaged schema must still
    /// open to be inspected and verified.
    package init(unrelated layouts: [RecordLayout]) {
        types = []
        self.layouts = layouts
        positions = EntityPositions(Model(version: 0, entities: []))
        byName = Dictionary(layouts.enumerated().map { ($1.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
        references = Array(repeating: [], count: layouts.count)
        referrers = Array(repeating: [], count: layouts.count)
        isEmpty = true
        sweepable = Array(repeating: true, count: layouts.count)
        hasFullTextIndexes = layouts.contains { !$0.fullTextIndexes.isEmpty }
    }

    /// Resolves and checks the relationships of a model whose layouts are `layouts` (in model order).
    /// - Throws: ``PersistenceError/Code/invalidSchema`` (``PersistenceError/Code/unknownEntity`` for a target not in
    ///   the model) naming the entity and relationship.
    package init(model: Model, layouts: [RecordLayout]) throws {
        types = model.entities
        self.layouts = layouts
        hasFullTextIndexes = layouts.contains { !$0.fullTextIndexes.isEmpty }
        positions = EntityPositions(model)
        var byName: [String: Int] = [:]
        for (position, layout) in layouts.enumerated() { byName[layout.entity.name] = position }
        var references = [[Reference]](repeating: [], count: layouts.count)
        var referrers = [[Referrer]](repeating: [], count: layouts.count)
        var links: [String: String] = [:]
        for (position, layout) in layouts.enumerated() {
            let entity = layout.entity
            for relationship in entity.relationships {
                let label = "relationship '\(entity.name).\(relationship.name)'"
                guard let target = byName[relationship.target] else {
                    throw PersistenceError(
                        .unknownEntity, "\(label) leads to '\(relationship.target)', which is not in the model")
                }
                let targetEntity = layouts[target].entity
                switch relationship.kind {
                case .toOne:
                    guard let name = relationship.foreignKey, let foreignKey = layout.position(of: name),
                        let rule = relationship.deleteRule
                    else { throw PersistenceError(.invalidSchema, "\(label) has no foreign key or delete rule") }
                    guard layout.types[foreignKey] == targetEntity.primaryKeyAttribute?.type else {
                        throw PersistenceError(
                            .invalidSchema,
                            "the foreign key '\(name)' of \(label) must have the type of '\(targetEntity.name)'s primary key"
                        )
                    }
                    references[position].append(
                        Reference(name: relationship.name, foreignKey: foreignKey, target: target))
                    referrers[target].append(
                        Referrer(source: position, name: relationship.name, foreignKey: foreignKey, rule: rule))
                case .manyToMany:
                    try Self.checkManyToMany(relationship, of: entity, targetEntity, byName, &links)
                case .toMany:
                    let inverse = relationship.inverse.flatMap { targetEntity.relationship(named: $0) }
                    guard let inverse, inverse.kind == .toOne, inverse.target == entity.name else {
                        throw PersistenceError(
                            .invalidSchema,
                            "\(label) names inverse '\(relationship.inverse ?? "")', which is not a to-one of '\(targetEntity.name)' leading back to '\(entity.name)'"
                        )
                    }
                }
            }
        }
        self.byName = byName
        self.references = references
        self.referrers = referrers
        isEmpty = references.allSatisfy(\.isEmpty)
        var sweepable = referrers.map(\.isEmpty)
        for referrers in referrers {
            for referrer in referrers where referrer.rule == .deny || referrer.rule == .nullify {
                sweepable[referrer.source] = false
            }
        }
        self.sweepable = sweepable
    }

    /// Checks a many-to-many: its inverse is a many-to-many of the target leading back to it, an entity's with itself
    /// has two names, its join entity is in the model, and no other many-to-many links the same two entities.
    private static func checkManyToMany(
        _ relationship: Relationship, of entity: EntityDescription, _ target: EntityDescription,
        _ byName: [String: Int], _ links: inout [String: String]
    ) throws {
        let label = "relationship '\(entity.name).\(relationship.name)'"
        let inverse = relationship.inverse.flatMap { target.relationship(named: $0) }
        guard let inverse, inverse.kind == .manyToMany, inverse.target == entity.name,
            inverse.inverse == relationship.name
        else {
            throw PersistenceError(
                .invalidSchema,
                "\(label) names inverse '\(relationship.inverse ?? "")', which is not a many-to-many of '\(target.name)' naming it back"
            )
        }
        guard entity.name != target.name || relationship.name != inverse.name else {
            throw PersistenceError(
                .invalidSchema,
                "\(label) is its own inverse: a many-to-many of an entity with itself has two names (\"follows\", \"followers\")"
            )
        }
        let link = ManyToManyLinks.entityName(of: relationship, of: entity.name)
        guard byName[link] != nil else {
            throw PersistenceError(
                .invalidSchema, "\(label) needs its join entity '\(link)' in the model (Model(entities:) adds it)")
        }
        guard ManyToManyLinks.isSource(relationship, of: entity.name) else { return }
        let pair = "\(entity.name).\(relationship.name)"
        if let other = links[link], other != pair {
            throw PersistenceError(
                .invalidSchema,
                "\(label) and '\(other)' both link '\(entity.name)' and '\(target.name)': two entities have at most one many-to-many (declare a join entity of your own for more)"
            )
        }
        links[link] = pair
    }

    /// Where a many-to-many `relationship` of the entity named `entity` keeps its links: the join entity's position,
    /// and the positions in its layout of this side's key (`near`) and the other side's (`far`).
    /// - Throws: ``PersistenceError/Code/invalidSchema`` when the join entity isn't in the model.
    package func links(of relationship: Relationship, of entity: String) throws -> (
        entity: Int, near: Int, far: Int
    ) {
        let name = ManyToManyLinks.entityName(of: relationship, of: entity)
        let keys = ManyToManyLinks.keys(of: relationship, of: entity)
        guard let link = byName[name], let near = layouts[link].position(of: keys.near),
            let far = layouts[link].position(of: keys.far)
        else { throw PersistenceError(.invalidSchema, "the join entity '\(name)' is not in the model") }
        return (link, near, far)
    }

    /// The position of the entity named `name`, if it is in the model.
    package func position(named name: String) -> Int? { byName[name] }

    /// The model's graph from its (cached) layouts.
    @_spi(PersistenceBackend) public convenience init(model: Model) throws {
        try self.init(model: model, layouts: model.describedLayouts())
    }
}
