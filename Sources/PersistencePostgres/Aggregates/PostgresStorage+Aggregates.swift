@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

extension PostgresStorage {
    @_spi(PersistenceBackend) public func aggregate(_ resolved: ResolvedAggregateQuery, entity: Int) throws
        -> [AggregateRow]?
    {
        let table = tables.all[entity]
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
            instrumentation.trace(sql, entity: entity)
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
        // A sum or mean of an infinite value is infinite here and refused on the other backends: refused here too.
        let sums = resolved.columns.indices.filter {
            resolved.columns[$0].function == .sum || resolved.columns[$0].function == .average
        }.map { $0 + resolved.groups.count }
        return try rows.map { row in
            try row.read(as: classes, into: &values)
            for position in sums {
                if case .real(let real) = values[position], !real.isFinite {
                    throw PersistenceError(
                        .invalidValue, "a sum or mean of a Double attribute of '\(entity)' is not finite")
                }
            }
            return AggregateRow(names: resolved.names, values: values)
        }
    }

    /// PostgreSQL's aggregates, typed as on the other backends: an integer sum as `bigint` (its `numeric` sum is
    /// exact: only the total can fail, leaving `bigint`), an integer mean as that exact sum divided by the count, in
    /// `double precision`; `Double` sums and means split as ``ExactSum`` splits them (values from 2^960 up summed
    /// times 2^-64), so that no partial sum overflows; text and blobs are `bytea`, which has no `min`/`max` before
    /// PostgreSQL 17, so their extremes are the first of the group's sorted values.
    static let aggregates = SQLAggregateDialect(
        expression: { function, column, type in
            let column = column ?? "*"
            let bytes = type?.storageClass == .text || type?.storageClass == .blob
            // The two parts of a Double sum, as ExactSum keeps them; `2::float8 ^ n` is exact (a power of two). A
            // CASE, not FILTER, so that a small value is never scaled (PostgreSQL refuses a product that underflows).
            let isSmall = "abs(\(column)) < 2::float8 ^ 960"
            let small = "coalesce(sum(CASE WHEN \(isSmall) THEN \(column) END), 0)"
            let large = "coalesce(sum(CASE WHEN NOT \(isSmall) THEN \(column) * 2::float8 ^ -64 END), 0)"
            let count = "nullif(count(\(column)), 0)"
            switch function {
            case .count: return "count(\(column))"
            case .sum where type == .integer: return "sum(\(column))::bigint"
            // The large part scaled back fails (out of range) only when the total leaves double precision.
            case .sum: return "CASE WHEN count(\(column)) > 0 THEN \(large) * 2::float8 ^ 64 + \(small) END"
            case .average where type == .integer: return "sum(\(column))::double precision / \(count)"
            // Each part divided before the large one is scaled back: a mean is finite when its values are.
            // Not `avg`: over double precision it also sums squares, which overflow long before the sum does.
            case .average: return "\(large) / \(count) * 2::float8 ^ 64 + \(small) / \(count)"
            case .min where bytes:
                return "(array_agg(\(column) ORDER BY \(column) ASC) FILTER (WHERE \(column) IS NOT NULL))[1]"
            case .max where bytes:
                return "(array_agg(\(column) ORDER BY \(column) DESC) FILTER (WHERE \(column) IS NOT NULL))[1]"
            case .min: return "min(\(column))"
            case .max: return "max(\(column))"
            }
        }, nullsFirst: " NULLS FIRST")
}
