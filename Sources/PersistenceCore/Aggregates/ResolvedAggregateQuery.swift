import Foundation

/// An ``AggregateQuery`` checked against an entity's layout: what every backend computes — the SQL backends in SQL,
/// LMDB in one streaming pass (``evaluate(_:)``).
@_spi(PersistenceBackend) public struct ResolvedAggregateQuery: Sendable {
    /// One aggregate with its attribute resolved.
    package struct Column: Sendable {
        package let function: Aggregate.Function
        /// The attribute's position in the entity's layout; `nil` for a count of records.
        package let position: Int?
        /// The attribute's type (of the records'), when there is an attribute.
        package let attributeType: AttributeType?
    }

    /// The condition on records, as given (backends filter with it) and resolved.
    package let condition: Condition?
    package let resolvedCondition: ResolvedCondition?
    /// The grouping attributes' positions in the entity's layout.
    package let groups: [Int]
    /// The aggregates, in the result's order after the groups.
    package let columns: [Column]
    /// The result rows' shape: the grouping attributes, then the aggregates, by name (all optional).
    package let result: RecordLayout
    /// The condition on result rows, resolved in ``result``.
    package let having: ResolvedCondition?

    /// Checks an aggregate query against `layout`.
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` for a name the entity lacks;
    ///   ``PersistenceError/Code/typeMismatch`` for a sum or average of a non-numeric attribute or an extreme of a
    ///   nested `Codable` one; ``PersistenceError/Code/invalidArgument`` when two results share a name; what
    ///   resolving `condition` and `having` throws.
    package init(_ query: AggregateQuery, in layout: RecordLayout, graph: ModelGraph? = nil) throws {
        let (aggregates, condition, groups, having) = (query.aggregates, query.condition, query.groupedBy, query.having)
        self.condition = condition
        resolvedCondition = try condition?.resolve(in: layout, graph: graph)
        self.groups = try groups.map { try layout.requirePosition(of: $0) }
        var results = self.groups.map {
            AttributeDescription(name: layout.names[$0], type: layout.types[$0], isOptional: true)
        }
        var columns: [Column] = []
        for aggregate in aggregates {
            let position = try aggregate.attribute.map { try layout.requirePosition(of: $0) }
            let type = position.map { layout.types[$0] }
            let resultType: AttributeType
            switch aggregate.function {
            case .count:
                resultType = .integer
            case .sum, .average:
                guard let type, type == .integer || type == .double else {
                    throw PersistenceError(
                        .typeMismatch,
                        "\(aggregate.function.rawValue) needs an integer or Double attribute; '\(aggregate.attribute ?? "")' is \(type?.rawValue ?? "none")"
                    )
                }
                resultType = aggregate.function == .average ? .double : type
            case .min, .max:
                guard let type, type != .codable else {
                    throw PersistenceError(
                        .typeMismatch,
                        "\(aggregate.function.rawValue) needs an attribute that orders; '\(aggregate.attribute ?? "")' holds nested Codable values or is none"
                    )
                }
                resultType = type
            }
            columns.append(Column(function: aggregate.function, position: position, attributeType: type))
            results.append(AttributeDescription(name: aggregate.name, type: resultType, isOptional: true))
        }
        guard !results.isEmpty else {
            throw PersistenceError(.invalidArgument, "an aggregate query needs an aggregate or a grouping attribute")
        }
        var names = Set<String>()
        for attribute in results where !names.insert(attribute.name).inserted {
            throw PersistenceError(
                .invalidArgument, "two results of the aggregate query are named '\(attribute.name)': name one with as:")
        }
        self.columns = columns
        result = RecordLayout(
            EntityDescription(unchecked: layout.entity.name, attributes: results, primaryKey: "", indexes: []))
        self.having = try having?.resolve(in: result)
    }

    /// The result's names: the grouping attributes', then the aggregates'.
    package var names: [String] { result.names }

    /// Computes the result from the matching records, which `records` hands to its body one at a time: one pass,
    /// memory per group. Groups come ordered by their values (`nil` first), as the SQL backends order them.
    package func evaluate(_ records: (_ body: ([Value]) throws -> Void) throws -> Void) throws -> [AggregateRow] {
        var groupsByKey: [[Value]: Int] = [:]
        var keys: [[Value]] = []
        var accumulators: [[Accumulator]] = []
        let fresh = columns.map { Accumulator(column: $0) }
        if groups.isEmpty {
            keys.append([])
            accumulators.append(fresh)
        }
        // The group of each record is looked up through one reused array: a new array only for a new group.
        var key: [Value] = []
        key.reserveCapacity(groups.count)
        try records { values in
            let index: Int
            if groups.isEmpty {
                index = 0
            } else {
                key.removeAll(keepingCapacity: true)
                for position in groups { key.append(values[position]) }
                if let known = groupsByKey[key] {
                    index = known
                } else {
                    index = keys.count
                    groupsByKey[key] = index
                    keys.append(key)
                    accumulators.append(fresh)
                }
            }
            for column in accumulators[index].indices {
                accumulators[index][column].add(values)
            }
        }
        var rows: [[Value]] = []
        for (key, group) in zip(keys, accumulators) {
            let row = try key + group.map { try $0.value() }
            if let having, !having.matches(row) { continue }
            rows.append(row)
        }
        rows.sort { lhs, rhs in
            for position in groups.indices {
                let order = Value.compare(lhs[position], rhs[position])
                if order != .orderedSame { return order == .orderedAscending }
            }
            return false
        }
        let names = self.names
        return rows.map { AggregateRow(names: names, values: $0) }
    }
}

/// What one aggregate has seen of one group so far.
private struct Accumulator {
    let column: ResolvedAggregateQuery.Column
    private var count: Int64 = 0
    /// A sum's or mean's values: partial sums never overflow, only the total decides (``ExactSum``).
    private var sum = ExactSum()
    private var extreme: Value = .null

    init(column: ResolvedAggregateQuery.Column) { self.column = column }

    mutating func add(_ values: [Value]) {
        guard let position = column.position else {
            count += 1
            return
        }
        let value = values[position]
        if value.isNull { return }
        count += 1
        switch column.function {
        case .count:
            break
        case .sum, .average:
            switch value {
            case .integer(let integer): sum.add(integer)
            case .real(let real): sum.add(real)
            default: break
            }
        case .min:
            if extreme.isNull || Value.compare(value, extreme) == .orderedAscending { extreme = value }
        case .max:
            if extreme.isNull || Value.compare(value, extreme) == .orderedDescending { extreme = value }
        }
    }

    /// The aggregate's value: `nil` (``Value/null``) over no values, except for counts.
    /// - Throws: ``PersistenceError/Code/invalidValue`` for a sum that leaves its type's range, or a sum or mean of
    ///   `Double`s that isn't finite (an infinite value among them).
    func value() throws -> Value {
        switch column.function {
        case .count:
            return .integer(count)
        case .sum:
            guard count > 0 else { return .null }
            if column.attributeType == .integer {
                guard let total = sum.integerTotal else {
                    throw PersistenceError(.invalidValue, "the sum of an integer attribute leaves the range of Int64")
                }
                return .integer(total)
            }
            let total = sum.realTotal
            guard total.isFinite else {
                throw PersistenceError(.invalidValue, "the sum of a Double attribute leaves the range of Double")
            }
            return .real(total)
        case .average:
            // An integer attribute's mean divides its exact sum, as the SQL backends compute it.
            guard let mean = sum.mean else { return .null }
            guard mean.isFinite else {
                throw PersistenceError(.invalidValue, "the mean of a Double attribute is not finite")
            }
            return .real(mean)
        case .min, .max:
            return extreme
        }
    }
}

extension RecordValueAccess {
    /// Computes an aggregate query in one pass over the matching records (the backends without SQL).
    package func aggregateByScanning<E: Entity>(_ type: E.Type, _ query: ResolvedAggregateQuery) throws
        -> [AggregateRow]
    {
        try query.evaluate { body in try forEachRecordValues(type, where: query.condition, body) }
    }
}
