public import PersistenceCore

extension LMDBContext {
    /// Computes the aggregates in one pass over the matching records (an index answers the condition where it
    /// can); a lone count of records is a count.
    public func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow] {
        try use(writing: false)
        let store = try stores.store(for: E.self)
        state.instrumentation.trace("aggregate", entity: store.layout.entity.name)
        let resolved = try ResolvedAggregateQuery(query, in: store.layout, graph: graph)
        if resolved.groups.isEmpty, resolved.having == nil, query.aggregates.count == 1,
            let only = resolved.columns.first, only.function == .count, only.position == nil
        {
            return [
                AggregateRow(names: resolved.names, values: [.integer(Int64(try count(type, where: query.condition)))])
            ]
        }
        return try aggregateByScanning(type, resolved)
    }
}
