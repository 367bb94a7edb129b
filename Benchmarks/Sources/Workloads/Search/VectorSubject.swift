public import Foundation
public import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import RawVectors

/// V1's record: an embedding of 384 dimensions.
public struct Embedded: Entity, Equatable {
    public var id: Int64
    public var embedding: Vector

    public static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: VectorCorpus.dimensions)]
}

/// V1's input, generated the same way on every run: `count` vectors of 384 dimensions (clustered around 64 centres,
/// as embeddings of related texts are) and 20 query vectors near stored ones.
public struct VectorCorpus: Sendable {
    public static let dimensions = 384
    public let records: [Embedded]
    public let queries: [Vector]
    /// The records' elements, one vector after another: the baseline's memory.
    public let floats: [Float]

    public init(count: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) - 0.5
        }
        let centres = (0..<64).map { _ in (0..<Self.dimensions).map { _ in next() } }
        var floats: [Float] = []
        floats.reserveCapacity(count * Self.dimensions)
        var records: [Embedded] = []
        records.reserveCapacity(count)
        for id in 0..<count {
            let centre = centres[id % centres.count]
            let elements = centre.map { $0 + next() * 0.4 }
            floats += elements
            records.append(Embedded(id: Int64(id), embedding: Vector(elements)))
        }
        self.records = records
        self.floats = floats
        queries = (0..<20).map { index in
            Vector(centres[(index * 7) % centres.count].map { $0 + next() * 0.3 })
        }
    }
}

/// V1: exact top-10 by cosine over every vector — a plain C loop over the floats in memory, and ours on SQLite,
/// plain and encrypted LMDB and PostgreSQL.
public enum VectorSubject: String, CaseIterable, Sendable {
    case raw = "raw-c-loop"
    case ours = "ours-sqlite"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"
    case oursPostgres = "ours-postgres"

    public static let workload = "V1"
    /// How many records each query returns.
    public static let limit = 10

    /// Opens an empty store of the subject in `directory` (PostgreSQL: in a schema of `server`'s, emptied first).
    public func open(in directory: URL, server: PostgresServer?, corpus: VectorCorpus) throws -> any VectorSearching {
        switch self {
        case .raw:
            return RawVectorLoop(corpus: corpus)
        case .ours:
            return try OursVectorStore(file: directory.appendingPathComponent("ours.sqlite")) {
                var builder = SQLiteBuilder(databaseName: "ours", entities: [Embedded.self])
                builder.directory = directory
                return try builder.create()
            }
        case .oursLMDBPlain, .oursLMDBEncrypted:
            return try OursVectorStore(file: directory.appendingPathComponent("ours.lmdb")) {
                var builder =
                    self == .oursLMDBEncrypted
                    ? LMDBBuilder(databaseName: "ours", passphrase: "benchmark passphrase", entities: [Embedded.self])
                    : LMDBBuilder.unencrypted(databaseName: "ours", entities: [Embedded.self])
                builder.directory = directory
                builder.initialMapSize = RawLMDBEnvironment.mapSize
                return try builder.create()
            }
        case .oursPostgres:
            return try OursVectorStore(file: nil) {
                guard let server else {
                    throw VerificationError(
                        workload: Self.workload, implementation: rawValue, message: "no PostgreSQL server")
                }
                var builder = try PostgresBuilder(url: server.url, model: Model(entities: [Embedded.self]))
                builder.schema = "bench_vectors"
                _ = try? builder.deleteStore()
                return try builder.create()
            }
        }
    }

    /// Stores `records` in `store`; the seconds it took.
    public func build(_ store: any VectorSearching, _ records: [Embedded]) throws -> Double {
        try Stopwatch.time { try store.build(records) }.seconds
    }

    /// Answers every query once; the seconds it took.
    public func answer(_ queries: [Vector], on store: any VectorSearching) throws -> Double {
        try Stopwatch.time {
            for query in queries { _ = try store.nearest(query, limit: Self.limit) }
        }.seconds
    }

    /// Each query's answer, checked: `limit` records, and the same as `expected`'s (ours answer alike on every
    /// backend; the baseline, whose float sums round differently, may differ only at equal-looking distances).
    /// - Throws: ``VerificationError`` when an answer differs.
    public func verifiedAnswers(_ queries: [Vector], on store: any VectorSearching, matching expected: [[Int64]]?)
        throws -> [[Int64]]
    {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let found = try queries.map { try store.nearest($0, limit: Self.limit) }
        try verify.expect(found.allSatisfy { $0.count == Self.limit }, "a query found fewer than \(Self.limit)")
        if let expected {
            let overlap = zip(found, expected).map { Set($0).intersection($1).count }.reduce(0, +)
            let required = self == .raw ? found.count * Self.limit * 9 / 10 : found.count * Self.limit
            try verify.expect(
                overlap >= required && (self == .raw || found == expected),
                "answered differently: \(found) against \(expected)")
        }
        return found
    }
}

/// What V1 does with a store.
public protocol VectorSearching: AnyObject {
    /// Stores the records, in one transaction.
    func build(_ records: [Embedded]) throws
    /// The ids of the `limit` records nearest `query` by cosine, each read whole.
    func nearest(_ query: Vector, limit: Int) throws -> [Int64]
    /// The store's size on disk, in bytes, once built.
    func size() throws -> Int
}

/// The baseline: the floats in one array in memory, ranked by a C loop.
final class RawVectorLoop: VectorSearching {
    let floats: [Float]
    let count: Int

    init(corpus: VectorCorpus) {
        floats = corpus.floats
        count = corpus.records.count
    }

    func build(_ records: [Embedded]) throws {}

    func nearest(_ query: Vector, limit: Int) throws -> [Int64] {
        var nearest = [Int64](repeating: 0, count: limit)
        let found = floats.withUnsafeBufferPointer { vectors in
            query.elements.withUnsafeBufferPointer { query in
                nearest.withUnsafeMutableBufferPointer { nearest in
                    raw_vectors_nearest_cosine(
                        vectors.baseAddress, count, VectorCorpus.dimensions, query.baseAddress, limit,
                        nearest.baseAddress)
                }
            }
        }
        return Array(nearest.prefix(found))
    }

    func size() throws -> Int { floats.count * 4 }
}

/// Ours: `create` of every record in one write, and a `Query` with nearest neighbours and a limit.
final class OursVectorStore<D: Database>: VectorSearching {
    let database: D
    let file: URL?

    init(file: URL?, _ open: () throws -> D) throws {
        database = try open()
        self.file = file
    }

    func build(_ records: [Embedded]) throws { try database.create(records) }

    func nearest(_ query: Vector, limit: Int) throws -> [Int64] {
        try database.recover(
            Embedded.self, query: Query(nearest: .to(query, in: "embedding", by: .cosine), limit: limit)
        ).map(\.id)
    }

    func size() throws -> Int { try storeSize(database, file: file, schema: "bench_vectors") }
}
