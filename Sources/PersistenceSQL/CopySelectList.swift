package import PersistenceCore

/// The select list of a ``MigrationStepBackend/copyTable(from:to:columns:)`` statement: each destination column's
/// source column (quoted), `coalesce(column, fallback)`, the fallback alone, or `NULL`; fallbacks are bound, each
/// written as `placeholder(n)` for the n-th bound value (1-based).
package func copySelectList(
    _ columns: [(source: Int?, fallback: Value)], from source: RecordLayout, placeholder: (Int) -> String
) -> (expressions: [String], arguments: [Value]) {
    var arguments: [Value] = []
    let expressions = columns.map { position, fallback -> String in
        guard let position else {
            guard !fallback.isNull else { return "NULL" }
            arguments.append(fallback)
            return placeholder(arguments.count)
        }
        let column = quote(source.names[position])
        guard !fallback.isNull else { return column }
        arguments.append(fallback)
        return "coalesce(\(column), \(placeholder(arguments.count)))"
    }
    return (expressions, arguments)
}
