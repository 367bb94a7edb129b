/// The entities a migration block's run works with, from the stored schema to the model, with the model's declared
/// renames applied as the SQL backends' inferred steps apply them (``MigrationRules/continuedSource(of:in:destinationNames:)``,
/// ``MigrationRules/renames(of:from:)``): every backend's run starts from this.
package struct MigrationEntities {
    /// One entity of the stored schema, the model, or both.
    package struct Entity {
        /// The model's name, or the stored one for a removed entity.
        package let name: String
        /// The stored schema's layout; `nil` for an added entity.
        package let old: RecordLayout?
        /// The model's layout; `nil` for a removed entity.
        package let new: RecordLayout?
        /// Old attribute names by new name, as the model declares them.
        package let renames: [String: String]
    }

    /// The stored schema's entities, then the model's added ones.
    package let entities: [Entity]
    /// The difference between the stored schema — with the model's declared renames applied — and the model.
    package let difference: SchemaDifference
    /// The declared renames applied, one clause each (`entity 'Tag' renamed 'Label'`, `'Contact.handle' renamed
    /// 'nickname'`).
    package let renameClauses: [String]

    /// - Throws: ``PersistenceError/Code/invalidSchema`` when two model entities declare one stored entity theirs.
    package init(stored: [EntityDescription], current: [RecordLayout]) throws {
        let sources = Dictionary(stored.map { ($0.name, RecordLayout($0)) }, uniquingKeysWith: { first, _ in first })
        let currentNames = Set(current.map(\.entity.name))
        // Which model entity continues each stored entity: the one of its name, or the one declaring it its previous
        // name. One stored entity's records continue as one entity only.
        var continuedBy: [String: RecordLayout] = [:]
        for layout in current {
            guard
                let source = MigrationRules.continuedSource(of: layout, in: sources, destinationNames: currentNames)
            else { continue }
            if let other = continuedBy[source.entity.name] {
                throw PersistenceError(
                    .invalidSchema,
                    "'\(other.entity.name)' and '\(layout.entity.name)' both declare the stored entity "
                        + "'\(source.entity.name)' as theirs; in a migration block one entity's records can continue "
                        + "as one entity only (copy them in the block instead)")
            }
            continuedBy[source.entity.name] = layout
        }
        var renamedStored: [EntityDescription] = []
        var renameClauses: [String] = []
        var entities: [Entity] = []
        for entity in stored where !entities.contains(where: { $0.name == entity.name }) {
            let old = RecordLayout(entity)
            guard let new = continuedBy[entity.name] else {
                renamedStored.append(entity)
                entities.append(Entity(name: entity.name, old: old, new: nil, renames: [:]))
                continue
            }
            let renames = MigrationRules.renames(of: new, from: old)
            renameClauses += MigrationRules.renameClauses(of: new, from: old, renames)
            renamedStored.append(MigrationRules.renamed(entity, to: new.entity.name, renames))
            entities.append(Entity(name: new.entity.name, old: old, new: new, renames: renames))
        }
        for layout in current where !entities.contains(where: { $0.name == layout.entity.name }) {
            entities.append(Entity(name: layout.entity.name, old: nil, new: layout, renames: [:]))
        }
        self.entities = entities
        self.renameClauses = renameClauses
        difference = SchemaDifference(stored: renamedStored, current: current.map(\.entity))
    }
}
