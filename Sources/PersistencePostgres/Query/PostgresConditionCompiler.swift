@_spi(PersistenceBackend) import PersistenceCore
import PersistenceSQL

/// Compiles checked conditions and queries into PostgreSQL SQL with bound arguments (`$1…`).
///
/// Every leaf is two-valued — never SQL `NULL` — so `NOT` means what it means in Swift, and the result matches
/// ``ResolvedCondition`` evaluation in memory and the other backends. Equality is written `col = $n AND col IS NOT
/// NULL` rather than `IS NOT DISTINCT FROM`, which PostgreSQL can't answer from an index.
struct PostgresConditionCompiler {
    let table: PostgresTable
    private var sql: SQLConditionCompiler
    var arguments: [Value] { sql.arguments }

    /// PostgreSQL's text: `$n`, `TRUE`/`FALSE`, equality as `col = $n AND col IS NOT NULL` (which an index answers,
    /// unlike `IS NOT DISTINCT FROM`), `position`.
    static let dialect = SQLDialect(
        placeholder: { "$\($0)" }, trueLiteral: "TRUE", falseLiteral: "FALSE",
        equal: { "(\($0) IS NOT NULL AND \($0) = \($1))" }, notEqual: { "NOT (\($0) IS NOT NULL AND \($0) = \($1))" },
        contains: { "position(\($1) IN \($0)) > 0" })

    /// - Parameter tables: The model's quoted tables in model order, for conditions on related records (needed
    ///   only when the condition has one).
    init(table: PostgresTable, tables: [String] = []) {
        self.table = table
        sql = SQLConditionCompiler(dialect: Self.dialect, layout: table.layout)
        sql.table = table.table
        sql.tables = tables
    }

    private func column(_ position: Int) -> String { sql.column(position) }

    private mutating func bind(_ value: Value) -> String { sql.bind(value) }

    mutating func compile(_ condition: ResolvedCondition) -> String { sql.compile(condition) }

    /// `SELECT … WHERE … ORDER BY … LIMIT $n OFFSET $m` for a checked query (every column, or those at `columns`);
    /// nulls sort first, as on the other backends.
    mutating func select(_ query: ResolvedQuery, columns: [Int]? = nil) -> String {
        let order = query.sort.map { "\(column($0.position)) \($0.ascending ? "ASC NULLS FIRST" : "DESC NULLS LAST")" }
            .joined(separator: ", ")
        let selected = columns.map { $0.map { column($0) }.joined(separator: ", ") } ?? table.columns
        var sql = self.sql.select(columns: selected, from: table.table, query, order: order)
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
