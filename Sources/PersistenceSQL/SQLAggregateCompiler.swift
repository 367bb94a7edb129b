@_spi(PersistenceBackend) package import PersistenceCore

/// What differs between the SQL backends' aggregate text: how each function is written for a column's type, and
/// how an ascending sort puts `nil` first.
package struct SQLAggregateDialect: Sendable {
    /// The SQL of one aggregate: `function` over the quoted `column` (`nil` for a count of rows) of `type`.
    package let expression:
        @Sendable (_ function: Aggregate.Function, _ column: String?, _ type: AttributeType?) -> String
    /// What follows `ASC` in an `ORDER BY` term so that `NULL` sorts first (empty where it does already).
    package let nullsFirst: String

    package init(
        expression: @escaping @Sendable (Aggregate.Function, String?, AttributeType?) -> String, nullsFirst: String
    ) {
        self.expression = expression
        self.nullsFirst = nullsFirst
    }
}

/// Compiles a checked aggregate query into one statement:
///
/// ```sql
/// SELECT * FROM (SELECT "g", count(*) AS "count", … FROM "T" WHERE … GROUP BY "g") AS persistence_groups
/// WHERE <having over the result's names> ORDER BY "g" ASC
/// ```
///
/// The inner query groups and aggregates; the outer one filters groups by `having` — compiled by the same
/// two-valued ``SQLConditionCompiler`` as every condition, over the result's columns — and orders them as the
/// in-memory evaluation does.
package struct SQLAggregateCompiler {
    package let dialect: SQLDialect
    package let aggregates: SQLAggregateDialect

    package init(dialect: SQLDialect, aggregates: SQLAggregateDialect) {
        self.dialect = dialect
        self.aggregates = aggregates
    }

    /// The statement and the values to bind, in order; `tables` are the model's quoted tables in model order, for
    /// a condition on related records.
    package func select(
        _ query: ResolvedAggregateQuery, from table: String, layout: RecordLayout, tables: [String] = []
    ) -> (
        sql: String, arguments: [Value]
    ) {
        var columns = query.groups.map { quote(layout.names[$0]) }
        for (index, column) in query.columns.enumerated() {
            let expression = aggregates.expression(
                column.function, column.position.map { quote(layout.names[$0]) }, column.attributeType)
            columns.append("\(expression) AS \(quote(query.names[query.groups.count + index]))")
        }
        var records = SQLConditionCompiler(dialect: dialect, layout: layout)
        records.table = table
        records.tables = tables
        var sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table)"
        if let condition = query.resolvedCondition { sql += " WHERE " + records.compile(condition) }
        if !query.groups.isEmpty {
            sql += " GROUP BY " + query.groups.map { quote(layout.names[$0]) }.joined(separator: ", ")
        }
        guard query.having != nil || !query.groups.isEmpty else { return (sql, records.arguments) }
        var groups = SQLConditionCompiler(dialect: dialect, layout: query.result, continuing: records.arguments)
        sql = "SELECT * FROM (\(sql)) AS persistence_groups"
        if let having = query.having { sql += " WHERE " + groups.compile(having) }
        if !query.groups.isEmpty {
            sql +=
                " ORDER BY "
                + query.names.prefix(query.groups.count).map { "\(quote($0)) ASC\(aggregates.nullsFirst)" }
                .joined(separator: ", ")
        }
        return (sql, groups.arguments)
    }
}
