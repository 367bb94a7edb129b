import PersistenceCore

/// Compiles checked conditions and queries into PostgreSQL SQL with bound arguments (`$1…`).
///
/// Every leaf is two-valued — never SQL `NULL` — so `NOT` means what it means in Swift, and the result matches
/// ``ResolvedCondition`` evaluation in memory and the other backends. Equality is written `col = $n AND col IS NOT
/// NULL` rather than `IS NOT DISTINCT FROM`, which PostgreSQL can't answer from an index.
struct PostgresConditionCompiler {
    let table: PostgresTable
    private(set) var arguments: [Value] = []

    init(table: PostgresTable) { self.table = table }

    private func column(_ position: Int) -> String { quote(table.layout.names[position]) }

    private mutating func bind(_ value: Value) -> String {
        arguments.append(value)
        return "$\(arguments.count)"
    }

    mutating func compile(_ condition: ResolvedCondition) -> String {
        switch condition {
        case .comparison(let at, let op, let value):
            let name = column(at)
            let sqlOperator =
                switch op {
                case .equal: "="
                case .notEqual: "="
                case .less: "<"
                case .lessOrEqual: "<="
                case .greater: ">"
                case .greaterOrEqual: ">="
                }
            let test = "(\(name) IS NOT NULL AND \(name) \(sqlOperator) \(bind(value)))"
            return op == .notEqual ? "NOT \(test)" : test
        case .oneOf(let at, let values):
            let name = column(at)
            let present = values.filter { !$0.isNull }
            var parts: [String] = []
            if present.count != values.count { parts.append("\(name) IS NULL") }
            if !present.isEmpty {
                let list = present.map { bind($0) }.joined(separator: ", ")
                parts.append("(\(name) IS NOT NULL AND \(name) IN (\(list)))")
            }
            return parts.isEmpty ? "FALSE" : "(" + parts.joined(separator: " OR ") + ")"
        case .contains(let at, let text):
            let name = column(at)
            return "(\(name) IS NOT NULL AND position(\(bind(.text(text))) IN \(name)) > 0)"
        case .hasPrefix(let at, let prefix):
            let name = column(at)
            guard let upper = prefix.prefixUpperBound else { return "\(name) IS NOT NULL" }
            // Bytes with the prefix are exactly [prefix, upper): index-friendly, and no LIKE wildcards to escape.
            return "(\(name) IS NOT NULL AND \(name) >= \(bind(.text(prefix))) AND \(name) < \(bind(.text(upper))))"
        case .isNull(let at):
            return "\(column(at)) IS NULL"
        case .and(let conditions):
            guard !conditions.isEmpty else { return "TRUE" }
            return "(" + conditions.map { compile($0) }.joined(separator: " AND ") + ")"
        case .or(let conditions):
            guard !conditions.isEmpty else { return "FALSE" }
            return "(" + conditions.map { compile($0) }.joined(separator: " OR ") + ")"
        case .not(let condition):
            return "NOT \(compile(condition))"
        }
    }

    /// `SELECT … WHERE … ORDER BY … LIMIT $n OFFSET $m` for a checked query; nulls sort first, as on the other
    /// backends.
    mutating func select(_ query: ResolvedQuery) -> String {
        var sql = "SELECT \(table.columns) FROM \(table.table)"
        if let condition = query.condition { sql += " WHERE " + compile(condition) }
        sql +=
            " ORDER BY "
            + query.sort.map { "\(column($0.position)) \($0.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")" }
            .joined(separator: ", ")
        if let limit = query.limit { sql += " LIMIT \(bind(.integer(Int64(limit))))" }
        if query.offset > 0 { sql += " OFFSET \(bind(.integer(Int64(query.offset))))" }
        return sql
    }

    /// `SELECT count(*) FROM` or `DELETE FROM` with an optional checked condition.
    mutating func statement(_ verb: String, where condition: ResolvedCondition?) -> String {
        var sql = "\(verb) \(table.table)"
        if let condition { sql += " WHERE " + compile(condition) }
        return sql
    }
}
