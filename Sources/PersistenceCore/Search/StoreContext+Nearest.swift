import Foundation

/// Nearest neighbours, written once for every backend: the distances here (`VectorDistance`), the stored vectors
/// from the storage (or the ranking itself, where the engine computes the same distances: PostgreSQL's server).
extension StoreContext {
    public func nearest<E: Entity>(_ type: E.Type, _ query: Query) throws -> [Neighbour<E>] {
        try use(writing: false)
        guard query.nearest != nil else {
            throw PersistenceError(.invalidArgument, "the query has no nearest neighbours (Query.nearest)")
        }
        var neighbours: [Neighbour<E>] = []
        try forEachNearest(type, query: query) { record, distance in
            neighbours.append(Neighbour(record: record, distance: distance))
        }
        return neighbours
    }

    /// The records a query with nearest neighbours selects, nearest first, handed to `body` one by one.
    @usableFromInline
    func forEachNearest<E: Entity>(_ type: E.Type, query: Query, _ body: (consuming E) throws -> Void) throws {
        try forEachNearest(type, query: query) { record, _ in try body(record) }
    }

    private func forEachNearest<E: Entity>(
        _ type: E.Type, query: Query, _ body: (consuming E, Double) throws -> Void
    ) throws {
        let position = try position(of: E.self)
        let layout = graph.layouts[position]
        guard let nearest = query.nearest else { return }
        let ranked = try rankedNeighbours(query, nearest, position: position)
        let reader = coders.reader(for: layout)
        for (key, distance) in ranked {
            try state.cancellation?.check()
            switch try storage.read(key: key, entity: position, into: reader) {
            case .absent:
                continue  // deleted by an earlier call of `body` (forEach)
            case .row(let row):
                let record: E
                do {
                    defer { storage.endRead() }
                    record = try reader.decode(E.self, in: row)
                }
                try body(record, distance)
            case .filled:
                try body(Self.decodeFilled(E.self, reader), distance)
            }
        }
    }

    /// The vector attribute `nearest` names, checked against its vector.
    /// - Throws: ``PersistenceError/Code/invalidArgument``: no such vector attribute, another dimension, a query
    ///   that also searches text, sorts or limits per value.
    static func vectorLayout(for nearest: NearestNeighbours, in query: Query, layout: RecordLayout) throws
        -> VectorLayout
    {
        let entity = layout.entity.name
        guard let vector = layout.vectors.first(where: { $0.name == nearest.attribute }) else {
            throw PersistenceError(
                layout.position(of: nearest.attribute) == nil ? .unknownAttribute : .invalidArgument,
                "'\(entity).\(nearest.attribute)' is no vector attribute (Entity.vectorAttributes)")
        }
        guard nearest.vector.dimensions == vector.dimensions else {
            throw PersistenceError(
                .invalidArgument,
                "'\(entity).\(vector.name)' holds vectors of \(vector.dimensions) dimensions; "
                    + "the query's has \(nearest.vector.dimensions)")
        }
        guard query.search == nil, query.sort.isEmpty, query.limitPerValue == nil else {
            throw PersistenceError(
                .invalidArgument,
                "nearest neighbours come nearest first: a query with them can't also search text, sort or limit "
                    + "per value")
        }
        return vector
    }

    /// The keys and distances of the records the query selects, nearest first then by primary key, within its
    /// window.
    private func rankedNeighbours(
        _ query: Query, _ nearest: NearestNeighbours, position: Int
    ) throws -> [(key: Value, distance: Double)] {
        let layout = graph.layouts[position]
        let vector = try Self.vectorLayout(for: nearest, in: query, layout: layout)
        var rest = query
        rest.nearest = nil
        let resolved = try rest.resolve(in: layout, graph: graph)
        let distance = try VectorDistance(to: nearest.vector, metric: nearest.metric)
        if let ranked = try storage.nearest(
            distance, at: vector.position, where: resolved.condition, entity: position, offset: resolved.offset,
            limit: resolved.limit)
        {
            return ranked
        }
        let count = resolved.limit.map { resolved.offset + $0 }
        if count == 0 { return [] }
        var ranking = NearestRanking(count: count)
        let batch = VectorBatch(dimensions: vector.dimensions)
        let bytes = vector.dimensions * 4
        try storage.scanVectors(
            at: vector.position, key: layout.primaryKeyIndex, where: resolved.condition, entity: position
        ) { key, stored, lasting in
            guard stored.count == bytes else {
                // Named by entity and attribute only: errors never hold stored values (verify() names the record).
                throw PersistenceError(
                    .typeMismatch,
                    "a '\(layout.entity.name)' record holds \(stored.count) bytes in '\(vector.name)', no vector of "
                        + "\(vector.dimensions) dimensions (stored before it was declared so?); verify() lists such "
                        + "records")
            }
            batch.add(key: key, bytes: stored, lasting: lasting)
            if batch.isFull { batch.take(distance) { ranking.add(key: $0, distance: $1) } }
        }
        // Nothing written since the scan: lasting bytes of the last vectors are still valid.
        batch.take(distance) { ranking.add(key: $0, distance: $1) }
        return Array(ranking.ranked.dropFirst(resolved.offset))
    }
}

/// The nearest records seen so far: all of them, sorted at the end, or only the first `count` (kept in order as
/// they come, the rest never sorted).
struct NearestRanking {
    private var kept: [(key: Value, distance: Double)] = []
    private let count: Int?

    init(count: Int?) { self.count = count }

    static func precedes(_ lhs: (key: Value, distance: Double), _ rhs: (key: Value, distance: Double)) -> Bool {
        lhs.distance != rhs.distance
            ? lhs.distance < rhs.distance : Value.compare(lhs.key, rhs.key) == .orderedAscending
    }

    mutating func add(key: Value, distance: Double) {
        let candidate = (key: key, distance: distance)
        guard let count else {
            kept.append(candidate)
            return
        }
        if kept.count == count, let last = kept.last, !Self.precedes(candidate, last) { return }
        var low = 0
        var high = kept.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(kept[middle], candidate) { low = middle + 1 } else { high = middle }
        }
        kept.insert(candidate, at: low)
        if kept.count > count { kept.removeLast() }
    }

    /// The records, nearest first.
    var ranked: [(key: Value, distance: Double)] { count == nil ? kept.sorted(by: Self.precedes) : kept }
}
