import Foundation
import PersistenceCore
import Testing

/// Nearest neighbours: the same records, in the same order, at the same distances to the last bit on every backend
/// — against distances computed here from the definition, apart from the library.
enum VectorChecks {
    static let all: [ConformanceCheck] = [
        vectors("ranks by cosine, dot product and euclidean distance exactly as defined, ties by primary key") {
            try ranking($0)
        },
        vectors("filters, then ranks: conditions, windows, forEach, and reads in a write") { try filtered($0) },
        vectors("stores vectors bit for bit and refuses other dimensions and non-finite elements") {
            try storedExactly($0)
        },
        vectors("refuses queries that can't rank") { try refusals($0) },
        vectors("observes a nearest-neighbours query like any other") { try await observed($0) },
    ]

    static func vectors(
        _ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void
    ) -> ConformanceCheck {
        ConformanceCheck("vector search " + name) { backend, directory in
            try await withDatabase(backend, directory, searchEntities, body)
        }
    }

    /// Deterministic elements of varied sign and magnitude (a linear congruential generator).
    static func elements(seed: UInt64, count: Int) -> [Float] {
        var state = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let unit = Float(state >> 40) / Float(1 << 24)
            return (unit - 0.5) * Float(1 << (state >> 20 % 5))
        }
    }

    /// Sixty passages: most with their own vector, some sharing one (ties), one all zeros, some without.
    static let passages: [Passage] = (Int64(1)...60).map { id in
        let lang = ["en", "fr", "de"][Int(id) % 3]
        switch id {
        case 7, 19, 41: return Passage(id: id, lang: lang, embedding: nil)
        case 13: return Passage(id: id, lang: lang, embedding: Vector(Array(repeating: 0, count: 8)))
        case 22, 33, 44: return Passage(id: id, lang: lang, embedding: Vector(elements(seed: 1005, count: 8)))
        default: return Passage(id: id, lang: lang, embedding: Vector(elements(seed: UInt64(id), count: 8)))
        }
    }

    /// The distance by its definition: products and differences of the elements as doubles, each sum from zero
    /// in dimension order.
    static func distance(_ record: [Float], _ query: [Float], _ metric: VectorMetric) -> Double {
        var dot = 0.0
        var recordSquares = 0.0
        var querySquares = 0.0
        var differences = 0.0
        for index in record.indices {
            let (a, b) = (Double(record[index]), Double(query[index]))
            dot += a * b
            recordSquares += a * a
            querySquares += b * b
            differences += (a - b) * (a - b)
        }
        switch metric {
        case .cosine:
            let norms = recordSquares.squareRoot() * querySquares.squareRoot()
            return norms == 0 ? 1 : 1 - dot / norms
        case .dotProduct: return -dot
        case .euclidean: return differences.squareRoot()
        }
    }

    /// The expected (id, distance) of the passages `filter` keeps, nearest first, then by id.
    static func expected(
        _ query: [Float], _ metric: VectorMetric, where filter: (Passage) -> Bool = { _ in true }
    ) -> [(id: Int64, distance: Double)] {
        passages.filter(filter).compactMap { passage in
            passage.embedding.map { (passage.id, distance($0.elements, query, metric)) }
        }.sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
    }

    static func expectNearest(
        _ db: some Database, _ query: [Float], _ metric: VectorMetric, where condition: Condition? = nil,
        filter: (Passage) -> Bool = { _ in true }, offset: Int = 0, limit: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let nearest = NearestNeighbours.to(Vector(query), in: "embedding", by: metric)
        let found = try db.nearest(
            Passage.self, Query(where: condition, nearest: nearest, limit: limit, offset: offset))
        let all = expected(query, metric, where: filter)
        let window = Array(all.dropFirst(offset).prefix(limit ?? all.count))
        #expect(found.map(\.record.id) == window.map(\.id), "\(metric)", sourceLocation: sourceLocation)
        #expect(
            found.map(\.distance.bitPattern) == window.map(\.distance.bitPattern), "\(metric) distances",
            sourceLocation: sourceLocation)
        let recovered = try db.recover(
            Passage.self, query: Query(where: condition, nearest: nearest, limit: limit, offset: offset))
        #expect(recovered.map(\.id) == window.map(\.id), sourceLocation: sourceLocation)
    }

    static func ranking(_ db: some Database) throws {
        try db.create(passages)
        let queries = [elements(seed: 1005, count: 8), elements(seed: 99, count: 8), elements(seed: 1000, count: 8)]
        for query in queries {
            for metric in VectorMetric.allCases {
                try expectNearest(db, query, metric)
                try expectNearest(db, query, metric, limit: 5)
                try expectNearest(db, query, metric, offset: 3, limit: 4)
            }
        }
        // Three passages share the first query's vector: at distance 0 (euclidean) or 0 up to rounding (cosine),
        // nearest, by primary key.
        let same = try db.nearest(
            Passage.self, Query(nearest: .to(Vector(queries[0]), in: "embedding", by: .euclidean), limit: 3))
        #expect(same.map(\.record.id) == [22, 33, 44])
        #expect(same.map(\.distance) == [0, 0, 0])
        // The zero vector is at cosine distance 1 from any vector, and a zero query at 1 from every record.
        let zero = try db.nearest(
            Passage.self, Query(nearest: .to(Vector(Array(repeating: 0, count: 8)), in: "embedding"), limit: 100))
        #expect(zero.count == 57 && zero.allSatisfy { $0.distance == 1 })
        #expect(zero.map(\.record.id) == zero.map(\.record.id).sorted())
        // A required vector keyed by text.
        try db.create([
            Point(id: "b", position: Vector([1, 0, 0])), Point(id: "a", position: Vector([0, 2, 0])),
            Point(id: "c", position: Vector([0.5, 0.5, 0])),
        ])
        let points = try db.nearest(Point.self, Query(nearest: .to(Vector([1, 0.1, 0]), in: "position"), limit: 2))
        #expect(points.map(\.record.id) == ["b", "c"])
    }

    static func filtered(_ db: some Database) throws {
        try db.create(passages)
        let query = elements(seed: 77, count: 8)
        for metric in VectorMetric.allCases {
            try expectNearest(db, query, metric, where: Field("lang") == "fr", filter: { $0.lang == "fr" }, limit: 4)
            try expectNearest(
                db, query, metric, where: Field("id") > 30 && Field("lang") != "de",
                filter: { $0.id > 30 && $0.lang != "de" })
        }
        #expect(
            try db.nearest(
                Passage.self, Query(where: Field("lang") == "xx", nearest: .to(Vector(query), in: "embedding"))
            ).isEmpty)
        #expect(
            try db.nearest(Passage.self, Query(nearest: .to(Vector(query), in: "embedding"), limit: 0)).isEmpty)
        // forEach hands the records over nearest first.
        var visited: [Int64] = []
        try db.read { context in
            try context.forEach(
                Passage.self, query: Query(nearest: .to(Vector(query), in: "embedding", by: .euclidean), limit: 6)
            ) { visited.append($0.id) }
        }
        #expect(visited == expected(query, .euclidean).prefix(6).map(\.id))
        // In a write, the query sees the write's own changes, and after a rollback they are gone.
        do {
            try db.write { context in
                try context.create(Passage(id: 100, lang: "en", embedding: Vector(query)))
                _ = try context.delete(Passage.self, id: 22)
                let nearest = try context.nearest(
                    Passage.self, Query(nearest: .to(Vector(query), in: "embedding", by: .euclidean), limit: 1))
                #expect(nearest.map(\.record.id) == [100] && nearest.first?.distance == 0)
                throw FullTextChecks.Rollback()
            }
        } catch is FullTextChecks.Rollback {}
        try expectNearest(db, query, .euclidean, limit: 3)
    }

    static func storedExactly(_ db: some Database) throws {
        let awkward: [Float] = [
            -0.0, .leastNonzeroMagnitude, -.leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            1 / 3, .ulpOfOne, 1e-30,
        ]
        try db.create(Passage(id: 1, lang: "en", embedding: Vector(awkward)))
        let stored = try #require(try db.recover(Passage.self, id: 1)?.embedding)
        #expect(stored.elements.map(\.bitPattern) == awkward.map(\.bitPattern))
        #expect(stored.storedBytes.count == 32)
        // Other dimensions, NaN and infinities are refused, and nothing of the write is stored.
        let refused: [(String, [Float])] = [
            ("7 dimensions", Array(repeating: 1, count: 7)), ("9 dimensions", Array(repeating: 1, count: 9)),
            ("no dimension", []), ("NaN", [1, 2, .nan, 4, 5, 6, 7, 8]),
            ("infinity", [1, 2, 3, 4, 5, 6, 7, -.infinity]),
        ]
        for (what, elements) in refused {
            expectError(.invalidValue, "a vector of \(what)") {
                try db.write { context in
                    try context.create(Passage(id: 2, lang: "en", embedding: nil))
                    try context.create(Passage(id: 3, lang: "en", embedding: Vector(elements)))
                }
            }
            expectError(.invalidValue, "an update to a vector of \(what)") {
                try db.update(Passage(id: 1, lang: "en", embedding: Vector(elements)))
            }
        }
        #expect(try db.count(Passage.self) == 1)
        #expect(try db.recover(Passage.self, id: 1)?.embedding?.elements.map(\.bitPattern) == awkward.map(\.bitPattern))
        #expect(try db.verify().isSound)
    }

    static func refusals(_ db: some Database) throws {
        try db.create(passages)
        let query = Vector(elements(seed: 3, count: 8))
        expectError(.invalidArgument, "a vector of other dimensions") {
            try db.nearest(Passage.self, Query(nearest: .to(Vector([1, 2, 3]), in: "embedding")))
        }
        expectError(.invalidArgument, "a vector with NaN") {
            try db.nearest(Passage.self, Query(nearest: .to(Vector([1, 2, 3, 4, 5, 6, 7, .nan]), in: "embedding")))
        }
        expectError(.invalidArgument, "an attribute that is no vector") {
            try db.nearest(Passage.self, Query(nearest: .to(query, in: "lang")))
        }
        expectError(.unknownAttribute, "no such attribute") {
            try db.nearest(Passage.self, Query(nearest: .to(query, in: "nope")))
        }
        expectError(.invalidArgument, "sort keys beside nearest neighbours") {
            try db.nearest(Passage.self, Query(nearest: .to(query, in: "embedding"), sortedBy: [.ascending("lang")]))
        }
        expectError(.invalidArgument, "a search beside nearest neighbours") {
            try db.recover(
                Story.self, query: Query(search: .matching("actor"), nearest: .to(query, in: "embedding")))
        }
        expectError(.invalidArgument, "a query without nearest neighbours") { try db.nearest(Passage.self, Query()) }
        expectError(.invalidArgument, "a negative limit") {
            try db.nearest(Passage.self, Query(nearest: .to(query, in: "embedding"), limit: -1))
        }
    }

    static func observed(_ db: some Database) async throws {
        try db.create(Array(passages.prefix(10)))
        let target = Vector(elements(seed: 4242, count: 8))
        let query = Query(nearest: .to(target, in: "embedding", by: .euclidean), limit: 1)
        let observation = ValueObservation.tracking([Passage.self]) { context in
            try context.recover(Passage.self, query: query).map(\.id)
        }
        var values = observation.values(in: db).makeAsyncIterator()
        let first = try await values.next()
        #expect(first == expected(target.elements, .euclidean, where: { $0.id <= 10 }).prefix(1).map(\.id))
        try await db.write { try $0.create(Passage(id: 500, lang: "en", embedding: target)) }
        #expect(try await values.next() == [500])
        try await db.write { _ = try $0.delete(Passage.self, id: 500) }
        #expect(try await values.next() == first)
    }
}
