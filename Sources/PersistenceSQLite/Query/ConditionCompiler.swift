import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQL

/// Compiles checked conditions (through the core's `SQLConditionCompiler`) and queries into SQLite's SQL with
/// bound arguments.
struct ConditionCompiler {
    let mapping: TableMapping
    private var sql: SQLConditionCompiler
    var arguments: [Value] { sql.arguments }

    /// SQLite's text: `?`, `1`/`0`, `IS` / `IS NOT` (null-safe, and SQLite uses indexes for `IS` as for `=`), `instr`.
    static let dialect = SQLDialect(
        placeholder: { _ in "?" }, trueLiteral: "1", falseLiteral: "0",
        equal: { "\($0) IS \($1)" }, notEqual: { "\($0) IS NOT \($1)" }, contains: { "instr(\($0), \($1)) > 0" })

    /// - Parameter tables: The model's quoted tables in model order, for conditions on related records (needed
    ///   only when the condition has one).
    init(mapping: TableMapping, tables: [String] = []) {
        self.mapping = mapping
        sql = SQLConditionCompiler(dialect: Self.dialect, layout: mapping.layout)
        sql.table = mapping.table
        sql.tables = tables
    }

    private func column(_ position: Int) -> String { sql.column(position) }

    private mutating func bind(_ value: Value) -> String { sql.bind(value) }

    mutating func compile(_ condition: ResolvedCondition) -> String { sql.compile(condition) }

    /// `SELECT … WHERE … ORDER BY … LIMIT ? OFFSET ?` for a checked query: every column, or those at `columns`.
    mutating func select(_ query: ResolvedQuery, columns: [Int]? = nil) -> String {
        let order = query.sort.map { "\(column($0.position)) \($0.ascending ? "ASC" : "DESC")" }
            .joined(separator: ", ")
        let selected = columns.map { $0.map { column($0) }.joined(separator: ", ") } ?? mapping.columns
        var sql = self.sql.select(columns: selected, from: mapping.table, query, order: order)
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
