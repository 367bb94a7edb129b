/// The rules every backend's migration applies without the user's code — declared renames (``Entity/previousName``,
/// ``Entity/previousAttributeNames``), defaults, widening — so that one model migrates the same way on SQLite,
/// PostgreSQL (a step's plan, in PersistenceSQL) and LMDB (its migration run).
package enum MigrationRules {
    /// The source entity a destination entity continues without a mapping: the one of its name, or of its declared
    /// previous name (``Entity/previousName``) when no destination entity keeps that name itself. Every backend
    /// applies declared renames by this rule.
    package static func continuedSource(
        of destination: RecordLayout, in sources: [String: RecordLayout], destinationNames: Set<String>
    ) -> RecordLayout? {
        if let source = sources[destination.entity.name] { return source }
        guard let previous = destination.previousName, !destinationNames.contains(previous) else { return nil }
        return sources[previous]
    }

    /// The report's clauses for the declared renames from `source` to `destination` (entity, then attributes).
    package static func renameClauses(
        of destination: RecordLayout, from source: RecordLayout, _ renames: [String: String]
    ) -> [String] {
        let name = destination.entity.name
        var clauses: [String] = []
        if source.entity.name != name { clauses.append("entity '\(source.entity.name)' renamed '\(name)'") }
        for (new, old) in renames.sorted(by: { $0.key < $1.key }) {
            clauses.append("'\(name).\(old)' renamed '\(new)'")
        }
        return clauses
    }

    /// The declared renames of `destination` that apply from `source`: old names by new name, for attributes the
    /// source has by the old name and either not by the new one, or by the new one renamed away itself (names
    /// swapped). A declared previous name the source has already renamed (a plan's later step) doesn't apply.
    package static func renames(of destination: RecordLayout, from source: RecordLayout) -> [String: String] {
        let candidates = destination.previousAttributeNames.filter { new, old in
            new != old && source.position(of: old) != nil
        }
        let renamedAway = Set(candidates.values)
        return candidates.filter { new, _ in source.position(of: new) == nil || renamedAway.contains(new) }
    }

    /// `entity` with the renames applied, for comparing with the destination.
    package static func renamed(_ entity: EntityDescription, to name: String, _ renames: [String: String])
        -> EntityDescription
    {
        var copy = entity
        copy.name = name
        let newNames = Dictionary(renames.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        for index in copy.attributes.indices {
            copy.attributes[index].name = newNames[copy.attributes[index].name] ?? copy.attributes[index].name
        }
        if let key = newNames[copy.primaryKey] { copy.primaryKey = key }
        copy.indexes = copy.indexes.map { index in
            Index(attributes: index.attributes.map { newNames[$0] ?? $0 }, isUnique: index.isUnique)
        }
        return copy
    }

    /// What keeps a record mapping from filling every destination attribute without code, or `nil`.
    /// - Parameters:
    ///   - mapped: Attributes a closure fills.
    ///   - requiresSameTypes: Inference: a type may only widen (`Bool` → integer, integer → `Double`); an explicit
    ///     copy checks each value instead.
    package static func blocker(_ mapping: RecordMapping, mapped: Set<String>, requiresSameTypes: Bool) -> String? {
        let entity = mapping.new.entity
        if requiresSameTypes, mapping.sources[mapping.new.primaryKeyIndex] != mapping.old.primaryKeyIndex {
            return "the primary key of '\(entity.name)' changed"
        }
        var reasons: [String] = []
        for (position, attribute) in entity.attributes.enumerated() where !mapped.contains(attribute.name) {
            let qualified = "'\(entity.name).\(attribute.name)'"
            guard let source = mapping.sources[position] else {
                if !attribute.isOptional && mapping.new.defaults[position] == nil {
                    reasons.append("\(qualified) is added, not optional, and has no default value")
                }
                continue
            }
            let old = mapping.old.entity.attributes[source]
            if old.isOptional && !attribute.isOptional && mapping.new.defaults[position] == nil {
                reasons.append("\(qualified) is no longer optional and has no default value for nil")
            }
            if requiresSameTypes && !isWidening(old.type, to: attribute.type) {
                reasons.append("\(qualified) changed type from \(old.type.rawValue) to \(attribute.type.rawValue)")
            }
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// Whether every value of type `old` is a value of type `new` as stored: the same type, `Bool` → integer, or
    /// integer → `Double`. (`Int32` → `Int64` and `Float` → `Double` are the same attribute type already.)
    package static func isWidening(_ old: AttributeType, to new: AttributeType) -> Bool {
        old == new || (old == .bool && new == .integer) || (old == .integer && new == .double)
    }
}
