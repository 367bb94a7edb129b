/// A condition checked against a layout, with attribute names resolved to positions.
///
/// Backends compile this, never the unchecked ``Condition``: every name in it exists and every value has a type
/// the attribute can be compared with.
@_spi(PersistenceBackend) public indirect enum ResolvedCondition: Sendable {
    case comparison(Int, ComparisonOperator, Value)
    case oneOf(Int, [Value])
    case contains(Int, String)
    case hasPrefix(Int, String)
    case isNull(Int)
    case and([ResolvedCondition])
    case or([ResolvedCondition])
    case not(ResolvedCondition)
    /// A condition on the records a relationship leads to (``Condition/related(_:_:_:)``).
    case related(RelatedCondition)
    /// A ``related(_:)`` condition answered ahead of a scan: how many matching related records each value of the
    /// attribute at the position has (backends that evaluate in memory build it; ``RelatedCounts``).
    case relatedCounts(Int, RelatedCounts)

    /// Whether the condition reaches through a relationship anywhere (not yet answered ahead of a scan).
    @_spi(PersistenceBackend) public var isRelated: Bool {
        switch self {
        case .related: true
        case .and(let conditions), .or(let conditions): conditions.contains { $0.isRelated }
        case .not(let condition): condition.isRelated
        default: false
        }
    }

    /// The condition with every ``related(_:)`` replaced by what `answer` makes of it (innermost first is the
    /// answerer's business: it resolves the related condition's own condition as it likes).
    package func answeringRelated(_ answer: (RelatedCondition) throws -> ResolvedCondition) rethrows
        -> ResolvedCondition
    {
        switch self {
        case .related(let related): try answer(related)
        case .and(let conditions): .and(try conditions.map { try $0.answeringRelated(answer) })
        case .or(let conditions): .or(try conditions.map { try $0.answeringRelated(answer) })
        case .not(let condition): .not(try condition.answeringRelated(answer))
        default: self
        }
    }
}

/// A query checked against a layout.
@_spi(PersistenceBackend) public struct ResolvedQuery: Sendable {
    @_spi(PersistenceBackend) public package(set) var condition: ResolvedCondition?
    /// Sort keys as (position, ascending), ending with the primary key.
    package var sort: [(position: Int, ascending: Bool)]
    package var limit: Int?
    package var offset: Int
    /// At most `limit` records per value of the attribute at `position` (``Query/limitPerValue``).
    package var limitPerValue: (position: Int, limit: Int)? = nil
}

extension ResolvedQuery {
    /// Every record `condition` selects, in the order of the primary key at `key`, no window.
    @_spi(PersistenceBackend) public static func selecting(_ condition: ResolvedCondition?, key: Int) -> ResolvedQuery {
        ResolvedQuery(condition: condition, sort: [(key, true)], limit: nil, offset: 0)
    }
}

extension Condition {
    /// Checks names and operand types against `layout`, and conditions on related records against the model's
    /// `graph` (without one they are ``PersistenceError/Code/invalidArgument``: where the graph isn't known, as in a
    /// migration's record access).
    /// - Throws: ``PersistenceError/Code/unknownAttribute`` or ``PersistenceError/Code/typeMismatch``.
    package func resolve(in layout: RecordLayout, graph: ModelGraph? = nil) throws -> ResolvedCondition {
        func position(_ name: String) throws -> Int { try layout.requirePosition(of: name) }
        func check(_ value: Value, against position: Int, allowNull: Bool) throws {
            let type = layout.types[position]
            if case .real(let real) = value, real.isNaN {
                throw PersistenceError(
                    .invalidValue, "a condition on '\(layout.names[position])' compares with NaN")
            }
            guard let storage = value.storageClass else {
                guard allowNull else {
                    throw PersistenceError(
                        .typeMismatch, "attribute '\(layout.names[position])' can't be ordered against nil")
                }
                return
            }
            guard type != .codable else {
                throw PersistenceError(
                    .typeMismatch,
                    "attribute '\(layout.names[position])' holds nested Codable values, which compare only with nil")
            }
            guard type.storageClass.isComparable(with: storage) else {
                throw PersistenceError(
                    .typeMismatch,
                    "attribute '\(layout.names[position])' (\(type.rawValue)) can't be compared with a \(storage.rawValue) value"
                )
            }
        }
        func requireText(_ position: Int) throws {
            guard layout.types[position].storageClass == .text else {
                throw PersistenceError(
                    .typeMismatch, "attribute '\(layout.names[position])' is not text, so it can't be matched as text")
            }
        }

        switch self {
        case .comparison(let name, let op, let value):
            let at = try position(name)
            try check(value, against: at, allowNull: op == .equal || op == .notEqual)
            switch (op, value) {
            case (.equal, .null): return .isNull(at)
            case (.notEqual, .null): return .not(.isNull(at))
            default: return .comparison(at, op, value)
            }
        case .oneOf(let name, let values):
            let at = try position(name)
            for value in values { try check(value, against: at, allowNull: true) }
            return .oneOf(at, values)
        case .contains(let name, let text):
            let at = try position(name)
            try requireText(at)
            return .contains(at, text)
        case .hasPrefix(let name, let text):
            let at = try position(name)
            try requireText(at)
            return .hasPrefix(at, text)
        case .isNull(let name):
            return try .isNull(position(name))
        case .and(let conditions):
            return try .and(conditions.map { try $0.resolve(in: layout, graph: graph) })
        case .or(let conditions):
            return try .or(conditions.map { try $0.resolve(in: layout, graph: graph) })
        case .not(let condition):
            return try .not(condition.resolve(in: layout, graph: graph))
        case .related(let name, let condition, let count):
            return try .related(Self.resolveRelated(name, condition, count, in: layout, graph: graph))
        }
    }
}

extension Query {
    /// Checks the query against `layout`.
    /// - Throws: ``PersistenceError/Code/unknownAttribute``, ``PersistenceError/Code/typeMismatch`` or
    ///   ``PersistenceError/Code/invalidArgument`` (a negative limit, limit per value or offset; a full-text search,
    ///   which the context answers before the storage sees the query).
    package func resolve(in layout: RecordLayout, graph: ModelGraph? = nil) throws -> ResolvedQuery {
        guard search == nil else {
            throw PersistenceError(
                .invalidArgument,
                "a full-text search is answered by recover, forEach and search, not where this query was given")
        }
        guard nearest == nil else {
            throw PersistenceError(
                .invalidArgument,
                "nearest neighbours are answered by recover, forEach and nearest, not where this query was given")
        }
        if let limit, limit < 0 { throw PersistenceError(.invalidArgument, "a query's limit can't be negative") }
        guard offset >= 0 else { throw PersistenceError(.invalidArgument, "a query's offset can't be negative") }
        var keys = try sort.map { (position: try layout.requirePosition(of: $0.attribute), ascending: $0.ascending) }
        if !keys.contains(where: { $0.position == layout.primaryKeyIndex }) {
            keys.append((layout.primaryKeyIndex, true))
        }
        var resolved = try ResolvedQuery(
            condition: condition?.resolve(in: layout, graph: graph), sort: keys, limit: limit, offset: offset)
        if let perValue = limitPerValue {
            guard perValue.limit >= 0 else {
                throw PersistenceError(.invalidArgument, "a query's limit per value can't be negative")
            }
            let position = try layout.requirePosition(of: perValue.attribute)
            guard layout.types[position] != .codable else {
                throw PersistenceError(
                    .typeMismatch,
                    "attribute '\(perValue.attribute)' holds nested Codable values, which can't share a limit per value"
                )
            }
            resolved.limitPerValue = (position, perValue.limit)
        }
        return resolved
    }
}

extension String {
    /// The smallest text above every text that starts with this one, or `nil` when there is none (empty, or only
    /// U+10FFFF scalars): backends match a prefix as the range `[prefix, prefixUpperBound)`.
    ///
    /// UTF-8 byte order is code-point order, so the texts starting with `prefix` are exactly those in
    /// `[prefix, prefix with its last scalar incremented)`; a maximal last scalar is dropped and the one before it
    /// incremented instead.
    package var prefixUpperBound: String? {
        var scalars = Array(unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if (0xD800...0xDFFF).contains(next) { next = 0xE000 }
            if let scalar = Unicode.Scalar(next) {
                scalars.append(scalar)
                var text = ""
                text.unicodeScalars.append(contentsOf: scalars)
                return text
            }
        }
        return nil
    }
}
