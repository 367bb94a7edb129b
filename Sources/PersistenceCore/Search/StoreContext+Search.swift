import Foundation

/// Full-text search, written once for every backend: the plan and relevance here, the counts from the storage's index
/// (or, where it keeps none or its index is being built, from the records themselves).
extension StoreContext {
    public func search<E: Entity>(_ type: E.Type, _ query: Query) throws -> [SearchHit<E>] {
        try use(writing: false)
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        guard let search = query.search else {
            throw PersistenceError(.invalidArgument, "a search's query has no full-text search (Query.search)")
        }
        let index = try Self.fullTextIndex(for: search, in: layout)
        let plan = FullTextPlan(search.text, analyzer: index.analyzer)
        let ranked = try rankedMatches(query, plan: plan, index: index, position: position)
        let reader = coders.reader(for: layout)
        let highlighter = FullTextHighlighter(plan: plan, index: index, layout: layout)
        var hits: [SearchHit<E>] = []
        hits.reserveCapacity(ranked.count)
        for match in ranked {
            try state.cancellation?.check()
            guard
                let (entity, texts) = try readMatched(
                    E.self, key: match.key, position: position, reader: reader, texts: index.positions)
            else { continue }
            hits.append(SearchHit(record: entity, score: match.score, texts: texts, highlighter: highlighter))
        }
        return hits
    }

    /// The records a query with a full-text search selects, in its order and window, handed to `body` one by one.
    @usableFromInline
    func forEachSearched<E: Entity>(_ type: E.Type, query: Query, _ body: (consuming E) throws -> Void) throws {
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        guard let search = query.search else { return }
        let index = try Self.fullTextIndex(for: search, in: layout)
        let plan = FullTextPlan(search.text, analyzer: index.analyzer)
        let ranked = try rankedMatches(query, plan: plan, index: index, position: position)
        let reader = coders.reader(for: layout)
        for match in ranked {
            try state.cancellation?.check()
            guard
                let (entity, _) = try readMatched(E.self, key: match.key, position: position, reader: reader, texts: [])
            else { continue }
            try body(entity)
        }
    }

    /// Reads a matched record: its entity and its values at `texts`; `nil` when it is gone (a block deleted it while
    /// `forEach` ran).
    private func readMatched<E: Entity>(
        _ type: E.Type, key: Value, position: Int, reader: RecordReader, texts: [Int]
    ) throws -> (E, [Value])? {
        switch try storage.read(key: key, entity: position, into: reader) {
        case .absent:
            return nil
        case .row(let row):
            defer { storage.endRead() }
            let values = texts.map { row.value(at: $0) }
            return (try reader.decode(E.self, in: row), values)
        case .filled:
            let values = texts.map { reader.values[$0] }
            return (try Self.decodeFilled(E.self, reader), values)
        }
    }

    /// The full-text index a search names.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` when the entity has no such index, or several and the
    ///   search names none.
    static func fullTextIndex(for search: FullTextSearch, in layout: RecordLayout) throws -> FullTextIndexLayout {
        let entity = layout.entity.name
        guard let attributes = search.attributes else {
            guard layout.fullTextIndexes.count == 1, let only = layout.fullTextIndexes.first else {
                throw PersistenceError(
                    .invalidArgument,
                    layout.fullTextIndexes.isEmpty
                        ? "entity '\(entity)' has no full-text index (Entity.fullTextIndexes)"
                        : "entity '\(entity)' has several full-text indexes: name the attributes of the one to search")
            }
            return only
        }
        let candidates = layout.fullTextIndexes.filter {
            $0.index.attributes == attributes && (search.tokenizer == nil || $0.index.tokenizer == search.tokenizer)
        }
        guard let index = candidates.first(where: { $0.index.tokenizer == .words }) ?? candidates.first else {
            throw PersistenceError(
                .invalidArgument,
                "entity '\(entity)' has no full-text index on \(attributes.joined(separator: ", "))"
                    + (search.tokenizer.map { " with the \($0.rawValue) tokenizer" } ?? ""))
        }
        return index
    }

    /// The keys and relevance of the records a query with a full-text search selects, in its order and window.
    private func rankedMatches(
        _ query: Query, plan: FullTextPlan, index: FullTextIndexLayout, position: Int
    ) throws -> [(key: Value, score: Double)] {
        let layout = graph.layouts[position]
        var rest = query
        rest.search = nil
        let resolved = try rest.resolve(in: layout, graph: graph)
        guard !plan.phrases.isEmpty else { return [] }
        try updateFullTextIndexes()
        let matches = try fullTextMatches(plan, index: index, position: position)
        let scores = matches.scores()
        var ranked: [(key: Value, score: Double, values: [Value])] = []
        ranked.reserveCapacity(matches.documents.count)
        let byAttributes = !query.sort.isEmpty || resolved.limitPerValue != nil
        if resolved.condition == nil && !byAttributes {
            if let limit = resolved.limit {
                // Only the first offset + limit in relevance order are wanted: kept in order as they come, the rest
                // never sorted.
                return Self.mostRelevant(
                    matches.documents, scores, count: resolved.offset + limit
                ).dropFirst(resolved.offset).map { ($0.key, $0.score) }
            }
            for (document, score) in zip(matches.documents, scores) { ranked.append((document.key, score, [])) }
        } else {
            // The condition, and the values the order needs, from the storage: set by set of keys.
            var score: [Value: Double] = [:]
            for (document, value) in zip(matches.documents, scores) { score[document.key] = value }
            let keys = matches.documents.map(\.key)
            let primaryKey = layout.primaryKeyIndex
            var chunk = 0
            while chunk < keys.count {
                let end = min(chunk + 500, keys.count)
                let among = ResolvedCondition.oneOf(primaryKey, Array(keys[chunk..<end]))
                let filter = ResolvedQuery(
                    condition: resolved.condition.map { .and([among, $0]) } ?? among, sort: [(primaryKey, true)],
                    limit: nil, offset: 0)
                try storage.scanValues(filter, entity: position, attributes: byAttributes ? nil : [primaryKey]) {
                    values in
                    let key = byAttributes ? values[primaryKey] : values[0]
                    ranked.append((key, score[key] ?? 0, byAttributes ? values : []))
                }
                chunk = end
            }
        }
        if byAttributes && !query.sort.isEmpty {
            ranked.sort { resolved.areInIncreasingOrder($0.values, $1.values) }
        } else {
            ranked.sort { lhs, rhs in
                lhs.score != rhs.score ? lhs.score > rhs.score : Value.compare(lhs.key, rhs.key) == .orderedAscending
            }
        }
        if let perValue = resolved.limitPerValue {
            var seen: [Value: Int] = [:]
            ranked = ranked.filter { match in
                let value = match.values[perValue.position]
                let count = seen[value, default: 0]
                seen[value] = count + 1
                return count < perValue.limit
            }
        }
        let start = min(resolved.offset, ranked.count)
        let end = resolved.limit.map { start + min($0, ranked.count - start) } ?? ranked.count
        return ranked[start..<end].map { ($0.key, $0.score) }
    }

    /// The `count` most relevant documents, most relevant first (equal relevance: by primary key), in one pass.
    static func mostRelevant(
        _ documents: [FullTextMatches.Document], _ scores: [Double], count: Int
    ) -> [(key: Value, score: Double)] {
        func precedes(_ lhs: (key: Value, score: Double), _ rhs: (key: Value, score: Double)) -> Bool {
            lhs.score != rhs.score ? lhs.score > rhs.score : Value.compare(lhs.key, rhs.key) == .orderedAscending
        }
        guard count > 0 else { return [] }
        var kept: [(key: Value, score: Double)] = []
        kept.reserveCapacity(min(count, documents.count) + 1)
        for (document, score) in zip(documents, scores) {
            let candidate = (key: document.key, score: score)
            if kept.count == count, let last = kept.last, !precedes(candidate, last) { continue }
            var low = 0
            var high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(kept[middle], candidate) { low = middle + 1 } else { high = middle }
            }
            kept.insert(candidate, at: low)
            if kept.count > count { kept.removeLast() }
        }
        return kept
    }

    /// The counts of `plan`'s terms: from the storage's index when it is built for this layout, from every record
    /// otherwise.
    private func fullTextMatches(_ plan: FullTextPlan, index: FullTextIndexLayout, position: Int) throws
        -> FullTextMatches
    {
        if storage.keepsFullTextIndexes, let state = try storage.fullTextIndexState(index, entity: position),
            state.isComplete, state.fingerprint == index.fingerprint
        {
            return try storage.fullTextMatches(plan, index: index, entity: position)
        }
        let layout = graph.layouts[position]
        var documents: [FullTextDocument] = []
        let all = ResolvedQuery(condition: nil, sort: [(layout.primaryKeyIndex, true)], limit: nil, offset: 0)
        try storage.scanValues(all, entity: position, attributes: nil) { values in
            documents.append(index.document(of: values, key: values[layout.primaryKeyIndex]))
        }
        return try FullTextMatching.matches(plan, documents: documents)
    }
}
