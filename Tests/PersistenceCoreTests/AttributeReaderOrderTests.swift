import Foundation
import PersistenceCore
import Testing

/// Reads its attributes in reverse declaration order, one of them twice and a JSON one in between: the reader's
/// in-order guess misses on every read and must fall back to the attribute's name.
private struct ReadsOutOfOrder: Entity, Equatable {
    var id: Int64
    var name: String
    var tags: [String]
    var score: Double

    init(id: Int64, name: String, tags: [String], score: Double) {
        self.id = id
        self.name = name
        self.tags = tags
        self.score = score
    }

    init(record: AttributeReader) throws {
        score = try record.decode("score")
        tags = try record.decodeJSON("tags")
        name = try record.decode("name")
        let again: String = try record.decode("name")
        guard again == name else { throw PersistenceError(.corrupt, "a second read returned another value") }
        id = try record.decode("id")
    }

    func encode(to record: AttributeWriter) throws {
        try record.encode(score, for: "score")
        try record.encodeJSON(tags, for: "tags")
        try record.encode(name, for: "name")
        try record.encode(id, for: "id")
    }
}

@Suite("Hand-written records read in any order")
struct AttributeReaderOrderTests {
    @Test("Attributes read out of declaration order, twice, or around a JSON one decode to their own values")
    func outOfOrder() throws {
        let entity = ReadsOutOfOrder(id: 7, name: "Ada", tags: ["a", "b"], score: 2.5)
        let record = try Record(encoding: entity)
        #expect(record["id"] == .integer(7))
        #expect(record["name"] == .text("Ada"))
        #expect(try record.decode(as: ReadsOutOfOrder.self) == entity)
    }

    @Test("One reader decodes records one after another, whatever order the previous one was read in")
    func readerReuse() throws {
        let first = ReadsOutOfOrder(id: 1, name: "One", tags: [], score: 1)
        let second = ReadsOutOfOrder(id: 2, name: "Two", tags: ["x"], score: -2)
        let records = try [first, second].map { try Record(encoding: $0) }
        let reader = RecordReader(layout: records[0].layout)
        #expect(try reader.decode(ReadsOutOfOrder.self, from: records[0].values) == first)
        #expect(try reader.decode(ReadsOutOfOrder.self, from: records[1].values) == second)
    }
}
