public import PersistenceCore
import PersistenceSQL

extension SQLiteContext {
    public func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow] {
        let connection = try use(writing: false)
        let mapping = try mappings.mapping(for: E.self)
        let resolved = try ResolvedAggregateQuery(query, in: mapping.layout, graph: graph)
        let (sql, arguments) = SQLAggregateCompiler(dialect: ConditionCompiler.dialect, aggregates: Self.aggregates)
            .select(
                resolved, from: mapping.table, layout: mapping.layout, tables: tables(for: resolved.resolvedCondition))
        let statement = try connection.statement(sql: sql, arguments: arguments.count)
        trace(sql, mapping)
        try statement.bind(arguments)
        defer { statement.reset() }
        var rows: [AggregateRow] = []
        var values: [Value] = []
        do {
            while try statement.step() {
                statement.readRow(into: &values)
                // SQLite's sum of reals goes to infinity where the other backends refuse.
                if values.contains(where: { if case .real(let real) = $0 { !real.isFinite } else { false } }) {
                    throw PersistenceError(
                        .invalidValue,
                        "a sum of a Double attribute of '\(mapping.layout.entity.name)' leaves the range of Double")
                }
                rows.append(AggregateRow(names: resolved.names, values: values))
            }
        } catch var error as PersistenceError where error.nativeMessage?.contains("integer overflow") == true {
            error.code = .invalidValue
            error.message =
                "the sum of an integer attribute of '\(mapping.layout.entity.name)' leaves the range of Int64"
            throw error
        }
        return rows
    }

    /// SQLite's aggregates: its own `sum` (which fails on integer overflow), `avg` of reals (of integers, the exact
    /// sum divided), `min` and `max` (by the binary collation: UTF-8 bytes); `NULL` sorts first already.
    static let aggregates = SQLAggregateDialect(
        expression: { function, column, type in
            switch function {
            case .count: "count(\(column ?? "*"))"
            case .sum: "sum(\(column ?? ""))"
            case .average where type == .integer:
                // Of the exact sum, not SQLite's running total in doubles, which loses integers past 2^53.
                "CAST(sum(\(column ?? "")) AS REAL) / count(\(column ?? ""))"
            case .average: "avg(\(column ?? ""))"
            case .min: "min(\(column ?? ""))"
            case .max: "max(\(column ?? ""))"
            }
        }, nullsFirst: "")
}
