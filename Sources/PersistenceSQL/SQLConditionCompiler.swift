@_spi(PersistenceBackend) package import PersistenceCore

/// What differs between the SQL backends' condition text: placeholders, boolean literals, null-safe equality and
/// substring search.
package struct SQLDialect: Sendable {
    /// The placeholder of the n-th bound value (1-based): `?` or `$n`.
    package let placeholder: @Sendable (Int) -> String
    package let trueLiteral: String
    package let falseLiteral: String
    /// Two-valued equality of a column and a bound value (`NULL` equals `NULL`), written so an index can answer it.
    package let equal: @Sendable (_ column: String, _ parameter: String) -> String
    /// Two-valued inequality.
    package let notEqual: @Sendable (_ column: String, _ parameter: String) -> String
    /// Whether a non-null column contains a bound text.
    package let contains: @Sendable (_ column: String, _ parameter: String) -> String

    package init(
        placeholder: @escaping @Sendable (Int) -> String, trueLiteral: String, falseLiteral: String,
        equal: @escaping @Sendable (String, String) -> String, notEqual: @escaping @Sendable (String, String) -> String,
        contains: @escaping @Sendable (String, String) -> String
    ) {
        self.placeholder = placeholder
        self.trueLiteral = trueLiteral
        self.falseLiteral = falseLiteral
        self.equal = equal
        self.notEqual = notEqual
        self.contains = contains
    }
}

/// Compiles checked conditions into a SQL backend's text, collecting the values to bind.
///
/// Every leaf is written to be two-valued — never SQL `NULL` — so `NOT` means what it means in Swift, and the result
/// matches ``ResolvedCondition`` evaluation in memory (the semantics the LMDB backend scans with).
package struct SQLConditionCompiler {
    package let dialect: SQLDialect
    /// The columns of the condition's positions.
    package private(set) var names: [String]
    package private(set) var arguments: [Value] = []
    /// How the statement names the table the condition is on (the quoted, maybe schema-qualified table): a
    /// condition on related records refers to its columns from a subquery.
    package var table = ""
    /// The quoted tables of the model's entities, in model order: where conditions on related records look.
    package var tables: [String] = []
    /// The correlation name of the subquery being compiled (`nil` at the statement's own level).
    private var scope: String?
    /// How many subqueries the statement has so far: each gets its own correlation name.
    private var subqueries = 0

    package init(dialect: SQLDialect, layout: RecordLayout) {
        self.dialect = dialect
        names = layout.names
    }

    /// A compiler whose values are bound after `arguments` (a statement's earlier part), numbering on from them.
    package init(dialect: SQLDialect, layout: RecordLayout, continuing arguments: [Value]) {
        self.init(dialect: dialect, layout: layout)
        self.arguments = arguments
    }

    /// The quoted column at a layout position (qualified inside a subquery).
    package func column(_ position: Int) -> String {
        scope.map { "\($0).\(quote(names[position]))" } ?? quote(names[position])
    }

    /// Binds a value; returns its placeholder.
    package mutating func bind(_ value: Value) -> String {
        arguments.append(value)
        return dialect.placeholder(arguments.count)
    }

    /// `SELECT columns FROM table WHERE … ORDER BY order` for a checked query, without its window (`LIMIT` and
    /// `OFFSET` differ by dialect). A limit per value ranks each value's records in the query's order and keeps
    /// the first ones:
    ///
    /// ```sql
    /// SELECT cols FROM (SELECT cols, ROW_NUMBER() OVER (PARTITION BY "a" ORDER BY …) AS persistence_rank
    ///                   FROM "T" WHERE …) AS persistence_ranked
    /// WHERE persistence_rank <= ? ORDER BY …
    /// ```
    package mutating func select(columns: String, from table: String, _ query: ResolvedQuery, order: String)
        -> String
    {
        let filter = query.condition.map { " WHERE " + compile($0) } ?? ""
        guard let perValue = query.limitPerValue else {
            return "SELECT \(columns) FROM \(table)\(filter) ORDER BY \(order)"
        }
        let ranked =
            "SELECT \(columns), ROW_NUMBER() OVER (PARTITION BY \(column(perValue.position)) ORDER BY \(order)) "
            + "AS persistence_rank FROM \(table)\(filter)"
        return "SELECT \(columns) FROM (\(ranked)) AS persistence_ranked WHERE persistence_rank <= "
            + "\(bind(.integer(Int64(perValue.limit)))) ORDER BY \(order)"
    }

    package mutating func compile(_ condition: ResolvedCondition) -> String {
        switch condition {
        case .comparison(let at, let op, let value):
            let name = column(at)
            switch op {
            case .equal: return dialect.equal(name, bind(value))
            case .notEqual: return dialect.notEqual(name, bind(value))
            case .less: return "(\(name) IS NOT NULL AND \(name) < \(bind(value)))"
            case .lessOrEqual: return "(\(name) IS NOT NULL AND \(name) <= \(bind(value)))"
            case .greater: return "(\(name) IS NOT NULL AND \(name) > \(bind(value)))"
            case .greaterOrEqual: return "(\(name) IS NOT NULL AND \(name) >= \(bind(value)))"
            }
        case .oneOf(let at, let values):
            let name = column(at)
            let present = values.filter { !$0.isNull }
            var parts: [String] = []
            if present.count != values.count { parts.append("\(name) IS NULL") }
            if !present.isEmpty {
                let list = present.map { bind($0) }.joined(separator: ", ")
                parts.append("(\(name) IS NOT NULL AND \(name) IN (\(list)))")
            }
            return parts.isEmpty ? dialect.falseLiteral : "(" + parts.joined(separator: " OR ") + ")"
        case .contains(let at, let text):
            let name = column(at)
            return "(\(name) IS NOT NULL AND \(dialect.contains(name, bind(.text(text)))))"
        case .hasPrefix(let at, let prefix):
            let name = column(at)
            guard let upper = prefix.prefixUpperBound else { return "\(name) IS NOT NULL" }
            // Text with the prefix is exactly the range [prefix, prefix with its last byte + 1) in byte order:
            // index-friendly, and no LIKE wildcards to escape.
            return "(\(name) IS NOT NULL AND \(name) >= \(bind(.text(prefix))) AND \(name) < \(bind(.text(upper))))"
        case .isNull(let at):
            return "\(column(at)) IS NULL"
        case .and(let conditions):
            guard !conditions.isEmpty else { return dialect.trueLiteral }
            return "(" + conditions.map { compile($0) }.joined(separator: " AND ") + ")"
        case .or(let conditions):
            guard !conditions.isEmpty else { return dialect.falseLiteral }
            return "(" + conditions.map { compile($0) }.joined(separator: " OR ") + ")"
        case .not(let condition):
            return "NOT \(compile(condition))"
        case .related(let related):
            return compile(related)
        case .relatedCounts(let at, let counts):
            // Backends that scan build this; in SQL it is the list of values that satisfy (or don't) the count.
            if let satisfying = counts.satisfyingValues { return compile(.oneOf(at, satisfying)) }
            return compile(.not(.oneOf(at, counts.counts.keys.filter { !counts.holds(for: $0) })))
        }
    }

    /// A condition on related records as a correlated subquery over the related table, its rows linked to this row
    /// by the foreign key (an index answers it):
    ///
    /// ```sql
    /// EXISTS (SELECT 1 FROM "Post" AS persistence_r1 WHERE persistence_r1."authorID" = "Author"."id" AND …)
    /// (SELECT count(*) FROM "Post" AS persistence_r1 WHERE …) >= ?
    /// ```
    private mutating func compile(_ related: RelatedCondition) -> String {
        subqueries += 1
        let alias = "persistence_r\(subqueries)"
        let outer = "\(scope ?? table).\(quote(names[related.local]))"
        let saved = (names, scope)
        (names, scope) = (related.targetLayout.names, alias)
        var filter = "\(column(related.remote)) = \(outer)"
        if let condition = related.condition { filter += " AND " + compile(condition) }
        (names, scope) = saved
        // A backend that didn't hand over its tables gets SQL the engine refuses: loud, never a wrong answer.
        let table = tables.indices.contains(related.target) ? tables[related.target] : "persistence_unknown_table"
        let from = "FROM \(table) AS \(alias) WHERE \(filter)"
        if related.count.isExistence { return "EXISTS (SELECT 1 \(from))" }
        if related.count.isAbsence { return "NOT EXISTS (SELECT 1 \(from))" }
        let comparison =
            switch related.count.comparison {
            case .equal: "="
            case .notEqual: "<>"
            default: related.count.comparison.rawValue
            }
        return "(SELECT count(*) \(from)) \(comparison) \(bind(.integer(Int64(related.count.count))))"
    }
}
