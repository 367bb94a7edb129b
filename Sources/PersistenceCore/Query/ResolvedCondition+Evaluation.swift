import Foundation

extension ResolvedCondition {
    /// Whether a record's values satisfy the condition, with the semantics SQLite gives the same condition.
    @_spi(PersistenceBackend) public func matches(_ values: [Value]) -> Bool {
        switch self {
        case .comparison(let at, let op, let operand):
            let value = values[at]
            switch op {
            case .equal: return Self.equal(value, operand)
            case .notEqual: return !Self.equal(value, operand)
            case .less, .lessOrEqual, .greater, .greaterOrEqual:
                guard !value.isNull, !operand.isNull else { return false }
                let order = Value.compare(value, operand)
                switch op {
                case .less: return order == .orderedAscending
                case .lessOrEqual: return order != .orderedDescending
                case .greater: return order == .orderedDescending
                default: return order != .orderedAscending
                }
            }
        case .oneOf(let at, let operands):
            let value = values[at]
            return operands.contains { Self.equal(value, $0) }
        case .contains(let at, let needle):
            guard case .text(let text) = values[at] else { return false }
            return Self.bytes(of: text, contain: needle)
        case .hasPrefix(let at, let prefix):
            guard case .text(let text) = values[at] else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .isNull(let at):
            return values[at].isNull
        case .and(let conditions):
            return conditions.allSatisfy { $0.matches(values) }
        case .or(let conditions):
            return conditions.contains { $0.matches(values) }
        case .not(let condition):
            return !condition.matches(values)
        case .relatedCounts(let at, let counts):
            return counts.holds(for: values[at])
        case .related:
            // Backends that evaluate in memory answer related conditions ahead of the scan
            // (`answeringRelated`); one left here is a bug in the backend, never the user's doing.
            assertionFailure("a related condition reached in-memory evaluation unanswered")
            return false
        }
    }

    /// The condition with each condition on related records answered ahead of a scan, for backends that evaluate
    /// conditions in memory: one pass over the related entity's records that match the related condition, counting
    /// them per linked value (``relatedCounts(_:_:)``), so that ``matches(_:)`` can then check each record.
    ///
    /// - Parameter visitMatching: Calls its last argument with the values of each record of the entity at its first
    ///   argument (a position in the model) that matches its second (all when `nil`; it may itself be related: the
    ///   backend answers it the same way, through this function).
    @_spi(PersistenceBackend) public func answeringRelated(
        visitingMatching visitMatching: (
            _ entity: Int, _ condition: ResolvedCondition?, _ visit: ([Value]) throws -> Void
        ) throws -> Void
    ) throws -> ResolvedCondition {
        try answeringRelated { related in
            var counts: [Value: Int] = [:]
            try visitMatching(related.target, related.condition) { values in
                let linked = values[related.remote]
                if !linked.isNull { counts[linked, default: 0] += 1 }
            }
            return .relatedCounts(related.local, RelatedCounts(counts: counts, count: related.count))
        }
    }

    /// Null-safe equality: `nil` equals only `nil`; numbers compare numerically.
    private static func equal(_ lhs: Value, _ rhs: Value) -> Bool {
        if lhs.isNull || rhs.isNull { return lhs.isNull && rhs.isNull }
        return Value.compare(lhs, rhs) == .orderedSame
    }

    private static func bytes(of text: String, contain needle: String) -> Bool {
        let haystack = Array(text.utf8)
        let pattern = Array(needle.utf8)
        guard !pattern.isEmpty else { return true }
        guard pattern.count <= haystack.count else { return false }
        for start in 0...(haystack.count - pattern.count)
        where haystack[start] == pattern[0] && haystack[start..<(start + pattern.count)].elementsEqual(pattern) {
            return true
        }
        return false
    }
}

extension ResolvedQuery {
    /// Orders two records by the sort keys (then primary key).
    package func areInIncreasingOrder(_ lhs: [Value], _ rhs: [Value]) -> Bool {
        for key in sort {
            let order = Value.compare(lhs[key.position], rhs[key.position])
            if order == .orderedSame { continue }
            return key.ascending ? order == .orderedAscending : order == .orderedDescending
        }
        return false
    }

    /// Whether the order is the default one: by primary key, ascending.
    @_spi(PersistenceBackend) public var isPrimaryKeyOrder: Bool { sort.count == 1 && sort[0].ascending }

    /// Keeps the records, in order, that the limit per value allows (all when there is none).
    package func limitingPerValue(_ ordered: [[Value]]) -> [[Value]] {
        guard let limitPerValue else { return ordered }
        // `Value` is hashed and compared by its bytes, so text groups as SQL's `PARTITION BY` groups it.
        var seen: [Value: Int] = [:]
        return ordered.filter { values in
            let key = values[limitPerValue.position]
            let count = seen[key, default: 0]
            seen[key] = count + 1
            return count < limitPerValue.limit
        }
    }

    /// Applies condition, order and window to records in memory — for backends that scan.
    /// - Parameter inPrimaryKeyOrder: The records are already sorted by primary key, so the default order needs
    ///   no sort.
    @_spi(PersistenceBackend) public func apply(to records: [[Value]], inPrimaryKeyOrder: Bool = false) -> [[Value]] {
        let matching = condition.map { condition in records.filter { condition.matches($0) } } ?? records
        return ordered(matching, inPrimaryKeyOrder: inPrimaryKeyOrder)
    }

    /// Applies order and window to records that already match the condition.
    @_spi(PersistenceBackend) public func ordered(_ matching: [[Value]], inPrimaryKeyOrder: Bool = false) -> [[Value]] {
        var matching = matching
        if !(inPrimaryKeyOrder && isPrimaryKeyOrder) { matching.sort(by: areInIncreasingOrder) }
        matching = limitingPerValue(matching)
        let start = min(offset, matching.count)
        let end = limit.map { start + min($0, matching.count - start) } ?? matching.count
        return Array(matching[start..<end])
    }
}
