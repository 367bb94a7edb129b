extension EntityDescription {
    /// The description with attributes and indexes in a canonical order, for comparing stored schemas: backends
    /// address attributes by name, so declaration order is not a schema change.
    package var normalized: EntityDescription {
        var copy = self
        copy.attributes.sort { $0.name < $1.name }
        copy.indexes.sort { $0.name(in: name) < $1.name(in: name) }
        copy.relationships.sort { $0.name < $1.name }
        copy.fullTextIndexes.sort { $0.name(in: name) < $1.name(in: name) }
        copy.vectorAttributes.sort { $0.attribute < $1.attribute }
        return copy
    }

    /// What changed, by entity and attribute names only (never values), as a sentence for errors.
    package static func difference(stored: [EntityDescription], current: [EntityDescription]) -> String {
        "the store's schema differs from the model and needs a migration: "
            + SchemaDifference(stored: stored, current: current).summary
    }
}
