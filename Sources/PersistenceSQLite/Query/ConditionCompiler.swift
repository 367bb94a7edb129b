import Foundation
import PersistenceCore

/// Compiles checked conditions and queries into SQL text with bound arguments.
///
/// Every leaf is written to be two-valued — never SQL `NULL` — so `NOT` means what it means in Swift, and the
/// result matches ``ResolvedCondition`` evaluation in memory (the semantics the LMDB backend scans with).
struct ConditionCompiler {
    let mapping: TableMapping
    private(set) var arguments: [Value] = []

    init(mapping: TableMapping) { self.mapping = mapping }

    private func column(_ position: Int) -> String { quote(mapping.layout.names[position]) }

    private mutating func bind(_ value: Value) -> String {
        arguments.append(value)
        return "?"
    }

    mutating func compile(_ condition: ResolvedCondition) -> String {
        switch condition {
        case .comparison(let at, let op, let value):
            let name = column(at)
            switch op {
            // IS / IS NOT: null-safe equality, and SQLite uses indexes for IS as for =.
            case .equal: return "\(name) IS \(bind(value))"
            case .notEqual: return "\(name) IS NOT \(bind(value))"
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
            return parts.isEmpty ? "0" : "(" + parts.joined(separator: " OR ") + ")"
        case .contains(let at, let text):
            let name = column(at)
            return "(\(name) IS NOT NULL AND instr(\(name), \(bind(.text(text)))) > 0)"
        case .hasPrefix(let at, let prefix):
            let name = column(at)
            guard let upper = prefix.prefixUpperBound else { return "\(name) IS NOT NULL" }
            // Text with the prefix is exactly the range [prefix, prefix with its last byte + 1) in the binary
            // collation's byte order: index-friendly, and no LIKE wildcards to escape.
            return "(\(name) IS NOT NULL AND \(name) >= \(bind(.text(prefix))) AND \(name) < \(bind(.text(upper))))"
        case .isNull(let at):
            return "\(column(at)) IS NULL"
        case .and(let conditions):
            guard !conditions.isEmpty else { return "1" }
            return "(" + conditions.map { compile($0) }.joined(separator: " AND ") + ")"
        case .or(let conditions):
            guard !conditions.isEmpty else { return "0" }
            return "(" + conditions.map { compile($0) }.joined(separator: " OR ") + ")"
        case .not(let condition):
            return "NOT \(compile(condition))"
        }
    }

    /// `SELECT … WHERE … ORDER BY … LIMIT ? OFFSET ?` for a checked query.
    mutating func select(_ query: ResolvedQuery) -> String {
        var sql = "SELECT \(mapping.columns) FROM \(mapping.table)"
        if let condition = query.condition { sql += " WHERE " + compile(condition) }
        sql +=
            " ORDER BY "
            + query.sort.map { "\(column($0.position)) \($0.ascending ? "ASC" : "DESC")" }
            .joined(separator: ", ")
        if query.limit != nil || query.offset > 0 {
            sql += " LIMIT \(bind(.integer(Int64(query.limit ?? -1)))) OFFSET \(bind(.integer(Int64(query.offset))))"
        }
        return sql
    }

    /// `SELECT count(*)` or `DELETE` with an optional checked condition.
    mutating func statement(_ verb: String, where condition: ResolvedCondition?) -> String {
        var sql = "\(verb) \(mapping.table)"
        if let condition { sql += " WHERE " + compile(condition) }
        return sql
    }
}
