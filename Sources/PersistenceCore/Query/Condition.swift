/// A condition on an entity's attributes: comparisons, membership, text matching, nullness, and their
/// combinations.
///
/// Build conditions from ``Field``:
///
/// ```swift
/// let adults: [User] = try db.recover(where: Field("age") >= 18 && Field("name").hasPrefix("J"))
/// ```
///
/// Attribute names are checked against the entity's schema (an unknown name is an
/// ``PersistenceError/Code/unknownAttribute`` error) and values are always bound, never spliced into query text.
///
/// Semantics are two-valued and the same on every backend: `==` and `!=` treat `nil` as a value (`Field("email")
/// == nil` matches missing emails; `!= "x"` matches `nil` too); ordering comparisons, ``Field/contains(_:)`` and
/// ``Field/hasPrefix(_:)`` are false for `nil`; text compares by UTF-8 bytes, case-sensitively; integers and
/// reals compare numerically.
///
/// Conditions reach through relationships with ``Related``: `Related("posts").contains(where: Field("draft") ==
/// false)`, `Related("author").matches(Field("name") == "Ann")`, `Related("posts").count >= 3`.
public indirect enum Condition: Sendable, Hashable {
    /// `attribute <op> value`.
    case comparison(String, ComparisonOperator, Value)
    /// The attribute equals one of the values.
    case oneOf(String, [Value])
    /// The attribute's text contains the substring.
    case contains(String, String)
    /// The attribute's text starts with the prefix.
    case hasPrefix(String, String)
    /// The attribute is `nil`.
    case isNull(String)
    /// All conditions hold (true when empty).
    case and([Condition])
    /// At least one condition holds (false when empty).
    case or([Condition])
    /// The condition does not hold.
    case not(Condition)
    /// The number of records the relationship leads to that match the condition (all when `nil`) satisfies the
    /// count comparison; build it with ``Related``. The condition is on the related entity's attributes.
    case related(String, Condition?, CountComparison)

    /// Every attribute name of the entity that the condition mentions (not those of conditions on related
    /// records, which belong to other entities).
    public var attributeNames: [String] {
        switch self {
        case .comparison(let name, _, _), .oneOf(let name, _), .contains(let name, _), .hasPrefix(let name, _),
            .isNull(let name):
            [name]
        case .and(let conditions), .or(let conditions): conditions.flatMap(\.attributeNames)
        case .not(let condition): condition.attributeNames
        case .related: []
        }
    }

    /// Both conditions hold.
    public static func && (lhs: Condition, rhs: Condition) -> Condition { .and([lhs, rhs]) }
    /// Either condition holds.
    public static func || (lhs: Condition, rhs: Condition) -> Condition { .or([lhs, rhs]) }
    /// The condition does not hold.
    public static prefix func ! (condition: Condition) -> Condition { .not(condition) }
}

/// The operator of a ``Condition/comparison(_:_:_:)``.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// An attribute named in a ``Condition`` or ``Sort``.
public struct Field: Sendable, Hashable {
    /// The attribute's name.
    public var name: String

    /// Names an attribute.
    public init(_ name: String) { self.name = name }

    /// The attribute equals one of the values.
    public func `in`(_ values: [some ValueConvertible]) -> Condition { .oneOf(name, values.map(\.storedValue)) }
    /// The attribute's text contains `text` (case-sensitive, no wildcards).
    public func contains(_ text: String) -> Condition { .contains(name, text) }
    /// The attribute's text starts with `prefix` (case-sensitive, no wildcards).
    public func hasPrefix(_ prefix: String) -> Condition { .hasPrefix(name, prefix) }
    /// The attribute is `nil`.
    public var isNull: Condition { .isNull(name) }
    /// The attribute is not `nil`.
    public var isNotNull: Condition { .not(.isNull(name)) }

    public static func == (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .equal, rhs.storedValue)
    }
    public static func != (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .notEqual, rhs.storedValue)
    }
    public static func < (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .less, rhs.storedValue)
    }
    public static func <= (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .lessOrEqual, rhs.storedValue)
    }
    public static func > (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .greater, rhs.storedValue)
    }
    public static func >= (lhs: Field, rhs: some ValueConvertible) -> Condition {
        .comparison(lhs.name, .greaterOrEqual, rhs.storedValue)
    }
    /// The attribute is `nil`.
    public static func == (lhs: Field, rhs: _OptionalNilComparisonType) -> Condition { .isNull(lhs.name) }
    /// The attribute is not `nil`.
    public static func != (lhs: Field, rhs: _OptionalNilComparisonType) -> Condition { .not(.isNull(lhs.name)) }
    /// Compares with a raw-value enum case by its raw value.
    public static func == <T: RawRepresentable>(lhs: Field, rhs: T) -> Condition
    where T.RawValue: ValueConvertible { lhs == rhs.rawValue }
    /// Compares with a raw-value enum case by its raw value.
    public static func != <T: RawRepresentable>(lhs: Field, rhs: T) -> Condition
    where T.RawValue: ValueConvertible { lhs != rhs.rawValue }
}

/// One sort key: an attribute and a direction.
///
/// Results are ordered by the sort keys in turn, then by primary key, so the order is always total and the same
/// on every backend. `nil` sorts before every value; text sorts by UTF-8 bytes.
public struct Sort: Sendable, Hashable {
    /// The attribute to sort by.
    public var attribute: String
    /// Whether smaller values come first.
    public var ascending: Bool

    /// Creates a sort key.
    public init(_ attribute: String, ascending: Bool = true) {
        self.attribute = attribute
        self.ascending = ascending
    }

    /// Smaller values first.
    public static func ascending(_ attribute: String) -> Sort { Sort(attribute, ascending: true) }
    /// Larger values first.
    public static func descending(_ attribute: String) -> Sort { Sort(attribute, ascending: false) }
}

/// What to recover: a condition, a full-text search or nearest neighbours, sort keys, and a window (offset, limit).
public struct Query: Sendable, Hashable {
    /// Which records; `nil` for all.
    public var condition: Condition?
    /// The order, before the primary key.
    public var sort: [Sort]
    /// The most records to return; `nil` for no limit.
    public var limit: Int?
    /// How many matching records to skip.
    public var offset: Int
    /// At most this many records for each value of an attribute — the first ones in the query's order — before
    /// `offset` and `limit` apply to the whole: "each author's 3 latest posts". `nil` for no such limit.
    public var limitPerValue: LimitPerValue?
    /// A full-text search the records must match (``FullTextSearch``): with no sort keys, the records come in order
    /// of relevance, most relevant first, then by primary key. `nil` for none.
    public var search: FullTextSearch?
    /// A vector to rank the records by distance to (``NearestNeighbours``): the records come nearest first, then by
    /// primary key; the condition selects among which (filter, then rank). `nil` for none.
    public var nearest: NearestNeighbours?

    /// Creates a query.
    public init(
        where condition: Condition? = nil, search: FullTextSearch? = nil, nearest: NearestNeighbours? = nil,
        sortedBy sort: [Sort] = [], limit: Int? = nil, offset: Int = 0, limitPerValue: LimitPerValue? = nil
    ) {
        self.condition = condition
        self.search = search
        self.nearest = nearest
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.limitPerValue = limitPerValue
    }
}

/// A limit on the records a ``Query`` returns for each value of one attribute (SQL's `ROW_NUMBER() OVER (PARTITION
/// BY …)`): records with equal values — `nil` equal to `nil`, text equal byte for byte — share the limit.
///
/// ```swift
/// // The 3 latest posts of each of these authors, in one query.
/// let query = Query(
///     where: Field("authorID").in(authorIDs), sortedBy: [.descending("published")],
///     limitPerValue: .init("authorID", 3))
/// ```
public struct LimitPerValue: Sendable, Hashable {
    /// The attribute whose values share a limit.
    public var attribute: String
    /// The most records per value; 0 returns none.
    public var limit: Int

    /// At most `limit` records for each value of `attribute`.
    public init(_ attribute: String, _ limit: Int) {
        self.attribute = attribute
        self.limit = limit
    }
}
