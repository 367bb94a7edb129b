public import PersistenceCore
import PersistenceSQL
import PostgresNIO

extension PostgresContext {
    public func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow] {
        try use(writing: false)
        let table = try tables.table(for: E.self)
        let resolved = try ResolvedAggregateQuery(query, in: table.layout, graph: graph)
        let (sql, compiled) = SQLAggregateCompiler(
            dialect: PostgresConditionCompiler.dialect, aggregates: Self.aggregates
        ).select(resolved, from: table.table, layout: table.layout, tables: tables(for: resolved.resolvedCondition))
        let classes = resolved.result.types.map(\.storageClass)
        var values: [Value] = []
        let arguments = try checked(compiled)
        let entity = table.layout.entity.name
        // Only a sum (or mean) can fail on the server, leaving bigint or double precision: in its own savepoint, so
        // that the failure leaves the transaction usable, as it does on the other backends.
        guard resolved.columns.contains(where: { $0.function == .sum || $0.function == .average }) else {
            return try run(sql, arguments, entity: entity).rows.map { row in
                try row.read(as: classes, into: &values)
                return AggregateRow(names: resolved.names, values: values)
            }
        }
        let rows: [PostgresRow]
        try run("SAVEPOINT persistence_statement")
        do {
            state.instrumentation.trace(sql, entity: entity)
            rows = Array(try connection.run(sql, arguments).rows)
            try run("RELEASE persistence_statement")
        } catch var error as PersistenceError where !error.endsTransaction {
            try run("ROLLBACK TO persistence_statement")
            try run("RELEASE persistence_statement")
            if error.nativeMessage?.contains("out of range") == true {
                error.code = .invalidValue
                error.message = "a sum of an attribute of '\(entity)' leaves the range of its type"
            }
            throw error
        } catch let error as PersistenceError {
            if failure == nil { failure = error }
            throw error
        }
        return try rows.map { row in
            try row.read(as: classes, into: &values)
            return AggregateRow(names: resolved.names, values: values)
        }
    }

    /// PostgreSQL's aggregates, typed as on the other backends: an integer sum as `bigint` (failing when it leaves
    /// it), a mean as the sum divided by the count, in `double precision`; text and blobs are `bytea`, which has no
    /// `min`/`max` before PostgreSQL 17, so their extremes are the first of the group's sorted values.
    static let aggregates = SQLAggregateDialect(
        expression: { function, column, type in
            let column = column ?? "*"
            let bytes = type?.storageClass == .text || type?.storageClass == .blob
            switch function {
            case .count: return "count(\(column))"
            case .sum: return type == .integer ? "sum(\(column))::bigint" : "sum(\(column))"
            case .average where type == .integer:
                return "sum(\(column))::bigint::double precision / nullif(count(\(column)), 0)"
            // Not `avg`: over double precision it also sums squares, which overflow long before the sum does.
            case .average: return "sum(\(column)) / nullif(count(\(column)), 0)"
            case .min where bytes:
                return "(array_agg(\(column) ORDER BY \(column) ASC) FILTER (WHERE \(column) IS NOT NULL))[1]"
            case .max where bytes:
                return "(array_agg(\(column) ORDER BY \(column) DESC) FILTER (WHERE \(column) IS NOT NULL))[1]"
            case .min: return "min(\(column))"
            case .max: return "max(\(column))"
            }
        }, nullsFirst: " NULLS FIRST")
}
