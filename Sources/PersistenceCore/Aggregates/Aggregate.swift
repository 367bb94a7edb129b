/// One value computed over the records a query matches: a count, a sum, an extreme or an average — alone, or per
/// group (``DatabaseContext/aggregate(_:query:)``).
///
/// Semantics are SQL's, the same on every backend: `nil` values are skipped; over no values `count` is 0 and the
/// others are `nil`; sums and averages take integer or `Double` attributes; `min` and `max` take any attribute but
/// a nested `Codable` one, in the order queries sort by (numbers numerically, text by UTF-8 bytes, blobs by bytes).
///
/// Sums depend only on the values, never on the order a backend reads them in: a partial sum may leave the type's
/// range, only the total decides. A sum of integers is exact; one whose total leaves `Int64` is
/// ``PersistenceError/Code/invalidValue``, never a wrap, and an average of integers divides that exact sum once (it
/// always has a value: `[Int64.max, 1]` averages to `4.611686018427388e18`). A sum of `Double`s whose total passes
/// `Double.greatestFiniteMagnitude` is ``PersistenceError/Code/invalidValue`` too, never infinity; an average of
/// `Double`s is finite whenever its values are. A sum or average of an infinite value is
/// ``PersistenceError/Code/invalidValue``.
///
/// Each aggregate has a ``name`` — its result's attribute in the result rows and in a `having` condition —
/// `"count"`, or the function and attribute (`"sum(amount)"`) unless you give one with `as:`.
public struct Aggregate: Sendable, Hashable {
    /// What an aggregate computes.
    public enum Function: String, Sendable, Hashable {
        /// How many records (with an attribute: how many non-`nil` values).
        case count
        /// The sum of the non-`nil` values: an integer for an integer attribute, a real for a `Double` one.
        case sum
        /// The least non-`nil` value.
        case min
        /// The greatest non-`nil` value.
        case max
        /// The mean of the non-`nil` values, as a real.
        case average
    }

    /// What it computes.
    public var function: Function
    /// The attribute it reads; `nil` for a count of records.
    public var attribute: String?
    /// The name of its result in result rows and `having` conditions.
    public var name: String

    /// Creates an aggregate; the static functions read better.
    public init(_ function: Function, of attribute: String?, as name: String? = nil) {
        self.function = function
        self.attribute = attribute
        self.name = name ?? attribute.map { "\(function.rawValue)(\($0))" } ?? function.rawValue
    }

    /// How many records, named `"count"`.
    public static var count: Aggregate { Aggregate(.count, of: nil) }
    /// How many records, under another name.
    public static func count(as name: String) -> Aggregate { Aggregate(.count, of: nil, as: name) }
    /// How many records have a non-`nil` value in `attribute`.
    public static func count(_ attribute: String, as name: String? = nil) -> Aggregate {
        Aggregate(.count, of: attribute, as: name)
    }
    /// The sum of an integer or `Double` attribute.
    public static func sum(_ attribute: String, as name: String? = nil) -> Aggregate {
        Aggregate(.sum, of: attribute, as: name)
    }
    /// The least value of an attribute.
    public static func min(_ attribute: String, as name: String? = nil) -> Aggregate {
        Aggregate(.min, of: attribute, as: name)
    }
    /// The greatest value of an attribute.
    public static func max(_ attribute: String, as name: String? = nil) -> Aggregate {
        Aggregate(.max, of: attribute, as: name)
    }
    /// The mean of an integer or `Double` attribute.
    public static func average(_ attribute: String, as name: String? = nil) -> Aggregate {
        Aggregate(.average, of: attribute, as: name)
    }
}

/// One row of an aggregate query's result: the group's values of the grouping attributes, then each aggregate's
/// value, by name.
///
/// ```swift
/// for row in try db.aggregate(Order.self, [.count, .sum("amount")], groupedBy: ["customerID"]) {
///     let customer: Int64? = try row.value("customerID")
///     let revenue: Double? = try row.value("sum(amount)")
/// }
/// ```
public struct AggregateRow: Sendable, Hashable, CustomStringConvertible {
    /// The grouping attributes' names, then the aggregates' names.
    public let names: [String]
    /// The values, in the order of ``names``.
    public let values: [Value]

    /// A row of these values by name.
    public init(names: [String], values: [Value]) {
        self.names = names
        self.values = values
    }

    /// The value named `name` (``Value/null`` for `nil`), or `nil` when the row has no such name.
    public subscript(_ name: String) -> Value? {
        names.firstIndex(of: name).map { values[$0] }
    }

    /// The value named `name` as a Swift value: `nil` for a stored `nil`.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for a name the row doesn't have;
    ///   ``PersistenceError/Code/typeMismatch`` when the value isn't a `T` (a real read as an integer, say; an
    ///   integer reads as a `Double`).
    public func value<T: StoredAttribute>(_ name: String, as type: T.Type = T.self) throws -> T? {
        guard let value = self[name] else {
            throw PersistenceError(.unknownAttribute, "the aggregate row has no value named '\(name)'")
        }
        if value.isNull { return nil }
        guard let typed = T(storedValue: value) else {
            throw PersistenceError(
                .typeMismatch, "the aggregate row's '\(name)' is \(value.storageClassName), not a \(T.self)")
        }
        return typed
    }

    /// `name: value` pairs.
    public var description: String {
        zip(names, values).map { "\($0): \($1)" }.joined(separator: ", ")
    }
}

/// What ``DatabaseContext/aggregate(_:query:)`` computes: aggregates over the records matching a condition, alone
/// or per group of records sharing the values of some attributes, the groups kept only when they satisfy `having`.
///
/// Groups come ordered by their grouping values (`nil` first), as queries sort. Without grouping attributes the
/// result is one row, also over no records (a count of 0, `nil` sums); with them, one row per group that has
/// records.
public struct AggregateQuery: Sendable {
    /// What to compute.
    public var aggregates: [Aggregate]
    /// Which records count; all when `nil`.
    public var condition: Condition?
    /// The attributes whose values form the groups; none for one group of all matching records.
    public var groupedBy: [String]
    /// Which groups to keep, as a condition on the result's names (the grouping attributes' and the
    /// aggregates').
    public var having: Condition?

    /// Creates an aggregate query.
    public init(
        _ aggregates: [Aggregate], where condition: Condition? = nil, groupedBy: [String] = [],
        having: Condition? = nil
    ) {
        self.aggregates = aggregates
        self.condition = condition
        self.groupedBy = groupedBy
        self.having = having
    }
}

extension DatabaseContext {
    /// Aggregates over the records matching `condition`, alone or per group (see ``AggregateQuery``).
    ///
    /// ```swift
    /// // Customers with more than 10 orders, and what each spent.
    /// let rows = try context.aggregate(
    ///     Order.self, [.count, .sum("amount", as: "spent")], groupedBy: ["customerID"], having: Field("count") > 10)
    /// ```
    public func aggregate<E: Entity>(
        _ type: E.Type = E.self, _ aggregates: [Aggregate], where condition: Condition? = nil,
        groupedBy groups: [String] = [], having: Condition? = nil
    ) throws -> [AggregateRow] {
        try aggregate(type, query: AggregateQuery(aggregates, where: condition, groupedBy: groups, having: having))
    }

    /// The distinct combinations of values of `attributes` among the records matching `condition`, ordered.
    public func distinct<E: Entity>(
        _ type: E.Type = E.self, _ attributes: [String], where condition: Condition? = nil
    ) throws -> [AggregateRow] {
        try aggregate(type, query: AggregateQuery([], where: condition, groupedBy: attributes))
    }

    /// The sum of an integer or `Double` attribute over the matching records; `nil` over no values.
    public func sum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try single(type, .sum(attribute), condition)
    }

    /// The mean of an integer or `Double` attribute over the matching records; `nil` over no values.
    public func average<E: Entity>(
        _ type: E.Type, _ attribute: String, where condition: Condition? = nil
    ) throws -> Double? {
        try single(type, .average(attribute), condition)
    }

    /// The least value of an attribute over the matching records; `nil` over no values.
    public func minimum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try single(type, .min(attribute), condition)
    }

    /// The greatest value of an attribute over the matching records; `nil` over no values.
    public func maximum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try single(type, .max(attribute), condition)
    }

    private func single<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ aggregate: Aggregate, _ condition: Condition?
    ) throws -> T? {
        let rows = try self.aggregate(type, query: AggregateQuery([aggregate], where: condition))
        guard let row = rows.first else { return nil }
        return try row.value(aggregate.name, as: T.self)
    }
}

extension Database {
    /// Aggregates over the records matching `condition`, alone or per group, in one read (see
    /// ``DatabaseContext/aggregate(_:_:where:groupedBy:having:)``).
    public func aggregate<E: Entity>(
        _ type: E.Type = E.self, _ aggregates: [Aggregate], where condition: Condition? = nil,
        groupedBy groups: [String] = [], having: Condition? = nil
    ) throws -> [AggregateRow] {
        try read { try $0.aggregate(type, aggregates, where: condition, groupedBy: groups, having: having) }
    }

    /// The distinct combinations of values of `attributes` among the matching records, ordered.
    public func distinct<E: Entity>(
        _ type: E.Type = E.self, _ attributes: [String], where condition: Condition? = nil
    ) throws -> [AggregateRow] {
        try read { try $0.distinct(type, attributes, where: condition) }
    }

    /// The sum of an integer or `Double` attribute over the matching records; `nil` over no values.
    public func sum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try read { try $0.sum(type, attribute, as: result, where: condition) }
    }

    /// The mean of an integer or `Double` attribute over the matching records; `nil` over no values.
    public func average<E: Entity>(_ type: E.Type, _ attribute: String, where condition: Condition? = nil) throws
        -> Double?
    {
        try read { try $0.average(type, attribute, where: condition) }
    }

    /// The least value of an attribute over the matching records; `nil` over no values.
    public func minimum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try read { try $0.minimum(type, attribute, as: result, where: condition) }
    }

    /// The greatest value of an attribute over the matching records; `nil` over no values.
    public func maximum<E: Entity, T: StoredAttribute>(
        _ type: E.Type, _ attribute: String, as result: T.Type = T.self, where condition: Condition? = nil
    ) throws -> T? {
        try read { try $0.maximum(type, attribute, as: result, where: condition) }
    }
}
