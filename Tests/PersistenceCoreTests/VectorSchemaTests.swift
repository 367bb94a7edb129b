import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

@Suite("Vector attributes")
struct VectorSchemaTests {
    struct Plain: Entity {
        var id: Int64
        var embedding: Data?
        var title: String
        static var entityName: String { "Doc" }
    }

    struct Declared: Entity {
        var id: Int64
        var embedding: Vector?
        var title: String
        static var entityName: String { "Doc" }
        static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 4)]
    }

    struct Wider: Entity {
        var id: Int64
        var embedding: Vector?
        var title: String
        static var entityName: String { "Doc" }
        static let vectorAttributes: [VectorAttribute] = [.init("embedding", dimensions: 6)]
    }

    @Test("A Vector is a Data attribute, stored as little-endian Float32, and a declaration is part of the schema")
    func derivedAndStored() throws {
        let description = try EntityDescription(describing: Declared.self)
        #expect(description.attribute(named: "embedding")?.type == .data)
        #expect(description.vectorAttributes == [VectorAttribute("embedding", dimensions: 4)])
        let vector = Vector([1, -2, 0.5, .leastNonzeroMagnitude])
        #expect(Array(vector.storedBytes.prefix(4)) == [0x00, 0x00, 0x80, 0x3F])
        #expect(Vector(storedBytes: vector.storedBytes) == vector)
        #expect(Vector(storedBytes: Data([1, 2, 3])) == nil)
        // Stored with the schema; a description without vectors encodes as before they existed.
        let decoded = try JSONDecoder().decode(EntityDescription.self, from: JSONEncoder().encode(description))
        #expect(decoded == description)
        let plain = try EntityDescription(describing: Plain.self)
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("vectorAttributes"))
        // Outside a record, a vector encodes as its array of elements.
        #expect(String(decoding: try JSONEncoder().encode(Vector([1, 2])), as: UTF8.self) == "[1,2]")
    }

    @Test("Declaring, widening and dropping a vector is a schema change, named in the difference")
    func difference() throws {
        let plain = try EntityDescription(describing: Plain.self)
        let declared = try EntityDescription(describing: Declared.self)
        let wider = try EntityDescription(describing: Wider.self)
        #expect(
            SchemaDifference(stored: [plain], current: [declared]).clauses == [
                "'Doc.embedding' is a vector of 4 dimensions"
            ])
        #expect(
            SchemaDifference(stored: [declared], current: [wider]).clauses == [
                "'Doc.embedding' is a vector of 6 dimensions"
            ])
        #expect(
            SchemaDifference(stored: [declared], current: [plain]).clauses == ["'Doc.embedding' is no longer a vector"])
        #expect(SchemaDifference(stored: [declared], current: [declared]).isEmpty)
    }

    @Test("A declaration naming no Data attribute, twice, or of no dimension is refused")
    func refusals() throws {
        let attributes = [
            AttributeDescription(name: "id", type: .integer, isOptional: false),
            AttributeDescription(name: "embedding", type: .data, isOptional: true),
            AttributeDescription(name: "title", type: .string, isOptional: false),
        ]
        func describe(_ vectors: [VectorAttribute]) throws -> EntityDescription {
            try EntityDescription(name: "Doc", attributes: attributes, primaryKey: "id", vectorAttributes: vectors)
        }
        let cases: [(PersistenceError.Code, [VectorAttribute])] = [
            (.unknownAttribute, [.init("nope", dimensions: 3)]), (.invalidSchema, [.init("title", dimensions: 3)]),
            (.invalidSchema, [.init("embedding", dimensions: 0)]),
            (.invalidSchema, [.init("embedding", dimensions: VectorAttribute.maximumDimensions + 1)]),
            (.invalidSchema, [.init("embedding", dimensions: 3), .init("embedding", dimensions: 3)]),
        ]
        for (code, vectors) in cases {
            #expect(throws: PersistenceError.self, "\(vectors)") { try describe(vectors) }
            do {
                _ = try describe(vectors)
            } catch let error as PersistenceError {
                #expect(error.code == code, "\(vectors): \(error)")
            }
        }
        #expect(try describe([.init("embedding", dimensions: 3)]).vectorAttributes.count == 1)
    }

    @Test("Values written from records are checked against the declared dimensions, as entities are")
    func recordValues() throws {
        let layout = RecordLayout(try EntityDescription(describing: Declared.self))
        let good: [Value] = [.integer(1), Vector([1, 2, 3, 4]).storedValue, .text("a")]
        #expect(try layout.checkedValues(good) == good)
        #expect(try layout.checkedValues([.integer(1), .null, .text("a")]).count == 3)
        for bad: Value in [
            Vector([1, 2, 3]).storedValue, .blob(Data([1, 2, 3, 4, 5])), Vector([1, 2, 3, .nan]).storedValue,
            Vector([1, 2, 3, .infinity]).storedValue,
        ] {
            #expect(throws: PersistenceError.self) { try layout.checkedValues([.integer(1), bad, .text("a")]) }
        }
        #expect(layout.verificationProblem(for: Vector([1]).storedValue, at: 1)?.kind == .typeMismatch)
        #expect(layout.verificationProblem(for: Vector([1, 2, 3, 4]).storedValue, at: 1) == nil)
    }
}
