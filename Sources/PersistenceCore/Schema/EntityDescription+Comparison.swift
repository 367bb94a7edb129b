extension EntityDescription {
    /// The description with attributes and indexes in a canonical order, for comparing stored schemas: backends
    /// address attributes by name, so declaration order is not a schema change.
    package var normalized: EntityDescription {
        var copy = self
        copy.attributes.sort { $0.name < $1.name }
        copy.indexes.sort { $0.name(in: name) < $1.name(in: name) }
        return copy
    }

    /// What changed, by entity and attribute names only (never values).
    package static func difference(stored: [EntityDescription], current: [EntityDescription]) -> String {
        let old = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(current.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [String] = []
        for name in new.keys.sorted() where old[name] == nil { changes.append("entity '\(name)' added") }
        for name in old.keys.sorted() where new[name] == nil { changes.append("entity '\(name)' removed") }
        for name in new.keys.sorted() {
            guard let before = old[name], let after = new[name], before != after else { continue }
            let beforeNames = Set(before.attributes.map(\.name))
            let afterNames = Set(after.attributes.map(\.name))
            for attribute in afterNames.subtracting(beforeNames).sorted() {
                changes.append("'\(name).\(attribute)' added")
            }
            for attribute in beforeNames.subtracting(afterNames).sorted() {
                changes.append("'\(name).\(attribute)' removed")
            }
            if beforeNames == afterNames { changes.append("entity '\(name)' changed types, order or indexes") }
        }
        return "the store's schema differs from the model and needs a migration: "
            + changes.joined(separator: "; ")
    }
}
