package import PersistenceCore

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
    package let names: [String]
    package private(set) var arguments: [Value] = []

    package init(dialect: SQLDialect, layout: RecordLayout) {
        self.dialect = dialect
        names = layout.names
    }

    /// A compiler whose values are bound after `arguments` (a statement's earlier part), numbering on from them.
    package init(dialect: SQLDialect, layout: RecordLayout, continuing arguments: [Value]) {
        self.init(dialect: dialect, layout: layout)
        self.arguments = arguments
    }

    /// The quoted column at a layout position.
    package func column(_ position: Int) -> String { quote(names[position]) }

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
        }
    }
}
