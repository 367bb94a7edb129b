import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// Vector attributes across model versions: declaring one on a `Data` attribute is a schema change every backend
/// migrates without code, keeping the bytes; a stored value of another size is reported, never ranked.
enum VectorMigrationChecks {
    static let all: [MigrationConformanceCheck] = [
        MigrationConformanceCheck("inferred: declares a vector on stored bytes, then drops it, the bytes kept") {
            try lifecycle($0)
        }
    ]

    static func lifecycle(_ stores: MigrationStores) throws {
        let passages = Array(VectorChecks.passages.prefix(20))
        do {
            let opened = try stores.open("Vectors", Model(version: 1, entities: [PlainPassage.self]))
            try opened.database.create(
                passages.map { PlainPassage(id: $0.id, lang: $0.lang, embedding: $0.embedding?.storedBytes) })
            try opened.database.close()
        }
        let query = VectorChecks.elements(seed: 31, count: 8)
        do {
            let opened = try stores.open("Vectors", Model(version: 2, entities: [Passage.self]))
            #expect(opened.report?.steps.map(\.kind) == [.inferred])
            #expect(
                opened.report?.steps.first?.changes.contains("'Passage.embedding' is a vector of 8 dimensions") == true,
                "\(opened.report?.steps.first?.changes ?? [])")
            #expect(try opened.database.recover(Passage.self, sortedBy: [.ascending("id")]) == passages)
            let nearest = try opened.database.nearest(
                Passage.self, Query(nearest: .to(Vector(query), in: "embedding", by: .euclidean), limit: 5))
            let expected = VectorChecks.expected(query, .euclidean, where: { $0.id <= 20 }).prefix(5)
            #expect(nearest.map(\.record.id) == expected.map(\.id))
            #expect(nearest.map(\.distance.bitPattern) == expected.map(\.distance.bitPattern))
            try opened.database.close()
        }
        do {
            // A later version no longer declares it: bytes of any size may be stored again.
            let opened = try stores.open("Vectors", Model(version: 3, entities: [PlainPassage.self]))
            try opened.database.create(PlainPassage(id: 99, lang: "en", embedding: Data([1, 2, 3])))
            #expect(try opened.database.count(PlainPassage.self) == passages.count + 1)
            #expect(
                try opened.database.recover(PlainPassage.self, id: 1)?.embedding == passages[0].embedding?.storedBytes)
            try opened.database.close()
        }
        do {
            // Declared again: the odd record is reported by verify() and makes a nearest query throw, named.
            let opened = try stores.open("Vectors", Model(version: 4, entities: [Passage.self]))
            let report = try opened.database.verify()
            #expect(report.problems.map(\.attribute) == ["embedding"], "\(report.problems)")
            expectError(.typeMismatch, "a stored value of another size") {
                try opened.database.nearest(Passage.self, Query(nearest: .to(Vector(query), in: "embedding")))
            }
            #expect(try opened.database.delete(Passage.self, id: 99))
            #expect(try opened.database.verify().isSound)
            #expect(
                try opened.database.nearest(Passage.self, Query(nearest: .to(Vector(query), in: "embedding"))).count
                    == 18)
            try opened.database.close()
        }
    }
}
