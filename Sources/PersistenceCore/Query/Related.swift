/// A relationship named in a ``Condition``: conditions on the records it leads to — "authors with at least one
/// published post", "posts whose author's name is Ann", "authors with more than 3 posts".
///
/// ```swift
/// let published: [Author] = try db.recover(where: Related("posts").contains(where: Field("draft") == false))
/// let byAnn: [Post] = try db.recover(where: Related("author").matches(Field("name") == "Ann"))
/// let prolific: [Author] = try db.recover(where: Related("posts").count >= 3)
/// let silent: [Author] = try db.recover(where: Related("posts").isEmpty)
/// ```
///
/// The relationship is one of the entity's ``Entity/relationships``: a to-many counts the records whose foreign key
/// names the record; a to-one counts the record its foreign key names (one, or none for `nil` or a key that names no
/// record). The condition inside is on the related entity's attributes and may reach on through its relationships.
/// Every backend answers in the same read — SQL as a correlated `EXISTS` or `count(*)` subquery over the foreign
/// key's index, LMDB by one pass over the related records before the scan — so results are the same everywhere.
///
/// An unknown relationship is ``PersistenceError/Code/unknownAttribute``.
public struct Related: Sendable, Hashable {
    /// The relationship's name.
    public var name: String

    /// Names a relationship of the entity the condition is on.
    public init(_ name: String) { self.name = name }

    /// At least one related record matches `condition`.
    public func contains(where condition: Condition) -> Condition { .related(name, condition, .atLeastOne) }
    /// The record a to-one leads to exists and matches `condition` (the same as ``contains(where:)``, read for a
    /// to-one).
    public func matches(_ condition: Condition) -> Condition { .related(name, condition, .atLeastOne) }
    /// At least one record is related (for a to-one: its foreign key names a stored record).
    public var exists: Condition { .related(name, nil, .atLeastOne) }
    /// No record is related.
    public var isEmpty: Condition { .related(name, nil, .none) }
    /// The number of related records, to compare with an integer: `Related("posts").count >= 3`.
    public var count: RelatedCount { RelatedCount(name: name, condition: nil) }
    /// The number of related records matching `condition`, to compare with an integer.
    public func count(where condition: Condition) -> RelatedCount { RelatedCount(name: name, condition: condition) }
}

/// The number of records a relationship leads to (those matching a condition), compared with an integer to make a
/// ``Condition``.
public struct RelatedCount: Sendable, Hashable {
    /// The relationship's name.
    public var name: String
    /// Which related records count; `nil` for all.
    public var condition: Condition?

    public static func == (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.equal, rhs) }
    public static func != (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.notEqual, rhs) }
    public static func < (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.less, rhs) }
    public static func <= (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.lessOrEqual, rhs) }
    public static func > (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.greater, rhs) }
    public static func >= (lhs: RelatedCount, rhs: Int) -> Condition { lhs.compared(.greaterOrEqual, rhs) }

    private func compared(_ comparison: ComparisonOperator, _ count: Int) -> Condition {
        .related(name, condition, CountComparison(comparison, count))
    }
}

/// A comparison of a count of related records with an integer (``Condition/related(_:_:_:)``).
public struct CountComparison: Sendable, Hashable {
    /// How the count compares.
    public var comparison: ComparisonOperator
    /// The integer it is compared with.
    public var count: Int

    /// `count <comparison> count`.
    public init(_ comparison: ComparisonOperator, _ count: Int) {
        self.comparison = comparison
        self.count = count
    }

    /// At least one.
    public static let atLeastOne = CountComparison(.greaterOrEqual, 1)
    /// None.
    public static let none = CountComparison(.equal, 0)

    /// Whether `actual` satisfies the comparison.
    public func holds(for actual: Int) -> Bool {
        switch comparison {
        case .equal: actual == count
        case .notEqual: actual != count
        case .less: actual < count
        case .lessOrEqual: actual <= count
        case .greater: actual > count
        case .greaterOrEqual: actual >= count
        }
    }

    /// Whether the comparison means "at least one" (`>= 1`, `> 0`, `!= 0`): an `EXISTS`.
    package var isExistence: Bool { !holds(for: 0) && (1...3).allSatisfy(holds(for:)) && holds(for: Int.max) }
    /// Whether the comparison means "none" (`== 0`, `< 1`, `<= 0`): a `NOT EXISTS`.
    package var isAbsence: Bool { holds(for: 0) && !holds(for: 1) && !holds(for: Int.max) }
}

extension Condition {
    /// The entity types whose records the condition reads besides `entity`'s own, following relationships
    /// declared with their target's type: what an observation of a query with this condition tracks.
    package func relatedEntityTypes(of entity: any Entity.Type) -> [any Entity.Type] {
        switch self {
        case .and(let conditions), .or(let conditions):
            return conditions.flatMap { $0.relatedEntityTypes(of: entity) }
        case .not(let condition):
            return condition.relatedEntityTypes(of: entity)
        case .related(let name, let condition, _):
            guard let relationship = entity.relationships.first(where: { $0.name == name }),
                let target = relationship.targetType
            else { return [] }
            let link =
                relationship.kind == .manyToMany ? [ManyToManyLinks.linkType(of: relationship, entity, target)] : []
            return link + [target] + (condition?.relatedEntityTypes(of: target) ?? [])
        default:
            return []
        }
    }
}
