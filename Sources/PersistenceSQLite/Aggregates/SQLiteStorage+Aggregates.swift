@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

extension SQLiteStorage {
    @_spi(PersistenceBackend) public func aggregate(_ resolved: ResolvedAggregateQuery, entity: Int) throws
        -> [AggregateRow]?
    {
        let mapping = mappings.all[entity]
        let (sql, arguments) = SQLAggregateCompiler(dialect: ConditionCompiler.dialect, aggregates: Self.aggregates)
            .select(
                resolved, from: mapping.table, layout: mapping.layout, tables: tables(for: resolved.resolvedCondition))
        let statement = try connection.statement(sql: sql, arguments: arguments.count)
        trace(sql, mapping)
        try statement.bind(arguments)
        defer { statement.reset() }
        var rows: [AggregateRow] = []
        var values: [Value] = []
        // Only a sum or mean is refused when it isn't finite (past the largest Double, or of an infinite value): a
        // minimum or maximum of an infinite value is that value, as on the other backends.
        let sums = resolved.columns.indices.filter {
            resolved.columns[$0].function == .sum || resolved.columns[$0].function == .average
        }.map { $0 + resolved.groups.count }
        do {
            while try statement.step() {
                statement.readRow(into: &values)
                for position in sums {
                    if case .real(let real) = values[position], !real.isFinite {
                        throw PersistenceError(
                            .invalidValue,
                            "a sum or mean of a Double attribute of '\(mapping.layout.entity.name)' is not finite")
                    }
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

    /// SQLite's aggregates: sums and means by ``ExactSumFunctions`` (only the total decides whether a sum leaves its
    /// type; SQLite's `sum` fails on the first partial sum that does), `min` and `max` (by the binary collation: UTF-8
    /// bytes); `NULL` sorts first already.
    static let aggregates = SQLAggregateDialect(
        expression: { function, column, _ in
            switch function {
            case .count: "count(\(column ?? "*"))"
            case .sum: "\(ExactSumFunctions.sum)(\(column ?? ""))"
            case .average: "\(ExactSumFunctions.average)(\(column ?? ""))"
            case .min: "min(\(column ?? ""))"
            case .max: "max(\(column ?? ""))"
            }
        }, nullsFirst: "")
}
