import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTesting
import Testing

@testable import PersistencePostgres

/// A record with an embedding of 16 dimensions, or none.
struct Embedding16: Entity, Equatable {
    var id: Int64
    var group: Int64
    var embedding: Vector?
    static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 16)]
}

/// Nearest neighbours on PostgreSQL are ranked by the server: only the window's keys and distances come back, never
/// every stored vector.
struct NearestInServerTests {
    static func vector(_ seed: Int) -> Vector {
        Vector((0..<16).map { Float(sin(Double(seed * 16 + $0) * 0.7)) * Float(seed % 7 + 1) })
    }

    /// The distances, as `VectorDistance` defines them, computed here apart: cosine.
    static func cosine(_ record: Vector, _ query: Vector) -> Double {
        var dot = 0.0
        var squares = 0.0
        var querySquares = 0.0
        for (a, q) in zip(record.elements, query.elements) {
            dot += Double(a) * Double(q)
            squares += Double(a) * Double(a)
            querySquares += Double(q) * Double(q)
        }
        let norms = squares.squareRoot() * querySquares.squareRoot()
        return norms == 0 ? 1 : 1 - dot / norms
    }

    @Test func theServerRanksAndSendsOnlyTheWindow() async throws {
        try await offPool {
            let log = CapturedLog()
            var builder = try freshBuilder([Embedding16.self], "v")
            builder.logger = log.logger()
            defer { _ = try? builder.deleteStore() }
            let db = try builder.create()
            defer { try? db.close() }
            let records = (1...300).map {
                Embedding16(id: Int64($0), group: Int64($0 % 3), embedding: $0 % 10 == 0 ? nil : Self.vector($0))
            }
            try db.create(records)
            let vectorTable = try #require(db.tables.all.first?.vectorTables.first)
            func storedRows() throws -> [Value] {
                try db.read { try $0.rows("SELECT count(*) FROM \(vectorTable.table)") }.map { $0.values[0] }
            }
            #expect(try storedRows() == [.integer(270)])

            let query = Self.vector(1_000)
            let before = log.entries.count
            let found = try db.nearest(
                Embedding16.self,
                Query(where: Field("group") != 1, nearest: .to(query, in: "embedding"), limit: 5, offset: 3))
            // The statements the storage ran (its trace lines name the backend; postgres-nio's own don't).
            let statements = log.entries[before...].filter {
                $0.contains("SELECT") && $0.contains("persistence.backend=postgres")
            }
            var ranked: [(id: Int64, distance: Double)] = []
            for record in records where record.group != 1 {
                guard let embedding = record.embedding else { continue }
                ranked.append((record.id, Self.cosine(embedding, query)))
            }
            ranked.sort { lhs, rhs in lhs.distance != rhs.distance ? lhs.distance < rhs.distance : lhs.id < rhs.id }
            let expected = ranked.dropFirst(3).prefix(5)
            #expect(found.map(\.record.id) == expected.map(\.id))
            #expect(found.map(\.distance.bitPattern) == expected.map(\.distance.bitPattern))
            // One ranking statement over the elements' table, then a read of each of the five found by key: the
            // records' vectors never travel to rank them.
            #expect(statements.filter { $0.contains(vectorTable.table) && $0.contains("ORDER BY") }.count == 1)
            let reads = statements.filter { $0.contains("\"Embedding16\"") && !$0.contains(vectorTable.table) }
            #expect(reads.count == 5, "\(reads)")
            #expect(reads.allSatisfy { $0.contains("WHERE \"id\" = $1") }, "\(reads)")

            // Written with the records: a vector set to nil leaves, a replaced one ranks anew, a deleted record goes.
            try db.update(Embedding16(id: 1, group: 1, embedding: nil))
            try db.update(Embedding16(id: 10, group: 1, embedding: query))
            try db.delete(Embedding16.self, id: 2)
            #expect(try storedRows() == [.integer(269)])
            let nearest = try db.nearest(Embedding16.self, Query(nearest: .to(query, in: "embedding"), limit: 1))
            #expect(nearest.map(\.record.id) == [10])
            #expect(nearest.first?.distance == Self.cosine(query, query))
        }
    }

    /// Raw SQL that changes records makes the elements' tables untrusted: the write that ran it, and every query after
    /// its commit, rank in the client (seeing what the raw SQL wrote); the next opening builds the tables again.
    @Test func rawSQLHandsTheRankingToTheClientUntilTheNextOpening() async throws {
        try await offPool {
            let log = CapturedLog()
            var builder = try freshBuilder([Embedding16.self], "vraw")
            builder.logger = log.logger()
            defer { _ = try? builder.deleteStore() }
            var db = try builder.create()
            defer { try? db.close() }
            try db.create((1...50).map { Embedding16(id: Int64($0), group: 0, embedding: Self.vector($0)) })
            let vectorTable = try #require(db.tables.all.first?.vectorTables.first)
            let entityTable = try #require(db.tables.all.first?.table)
            let query = Self.vector(1_000)
            let nearestOne = Query(nearest: .to(query, in: "embedding"), limit: 1)
            /// The nearest record's id, and whether the server ranked (its ranking statement ran).
            func nearest(_ read: () throws -> [Neighbour<Embedding16>]) throws -> (id: Int64?, inServer: Bool) {
                let before = log.entries.count
                let id = try read().first?.record.id
                let inServer = log.entries[before...].contains {
                    $0.contains(vectorTable.table) && $0.contains("ORDER BY")
                }
                return (id, inServer)
            }
            let bytes = query.elements.withUnsafeBytes { Data($0) }
            try db.write { context in
                try context.execute(
                    "UPDATE \(entityTable) SET \"embedding\" = $1 WHERE \"id\" = 7", [.blob(bytes)])
                let found = try nearest { try context.nearest(Embedding16.self, nearestOne) }
                #expect(found.id == 7 && !found.inServer)
            }
            var found = try nearest { try db.nearest(Embedding16.self, nearestOne) }
            #expect(found.id == 7 && !found.inServer)
            /// The elements' table's object id: the same while it is filled again in place.
            func tableIdentity() throws -> [Value] {
                try db.read { try $0.rows("SELECT '\(vectorTable.table)'::regclass::oid::bigint") }.map { $0.values[0] }
            }
            let identity = try tableIdentity()
            try db.close()
            db = try builder.create()
            found = try nearest { try db.nearest(Embedding16.self, nearestOne) }
            #expect(found.id == 7 && found.inServer)
            #expect(try tableIdentity() == identity)
            let stored = try db.read { try $0.rows("SELECT count(*) FROM \(vectorTable.table)") }.map { $0.values[0] }
            #expect(stored == [.integer(50)])
        }
    }
}
