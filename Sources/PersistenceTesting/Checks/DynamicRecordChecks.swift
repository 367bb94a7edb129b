import Foundation
import PersistenceCore
import Testing

/// Records without their Swift type, through the context's record-level access (what sync reads and writes): each
/// value checked as decoding the entity would check it, foreign keys checked, nothing stored on a refusal — the
/// same on every backend.
enum DynamicRecordChecks {
    typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        ConformanceCheck("writes and reads records as values, checked as entities are") { backend, directory in
            try await withDatabase(backend, directory, [Gadget.self] + G.ruleEntities) { try values($0) }
        }
    ]

    /// Attributes whose stored values decoding checks beyond their storage class.
    struct Gadget: Entity, Equatable {
        var id: UUID
        var flag: Bool
        var weight: Double
        var tags: [String]
    }

    static func values(_ db: some Database) throws {
        let id = UUID(uuidString: "00000000-0000-0000-0000-000000000007") ?? UUID()
        let key = Value.blob(withUnsafeBytes(of: id.uuid) { Data($0) })
        let tags = Value.blob(Data(#"["a","b"]"#.utf8))
        try db.write { context in
            let records = try #require(context.recordAccess)
            // An integer for a real attribute is stored as the same real, as an entity stores it.
            try records.storeRecord(Gadget.self, values: [key, .integer(1), .integer(2), tags], exists: false)
            #expect(try records.recordValues(Gadget.self, key: key) == [key, .integer(1), .real(2), tags])
            #expect(try records.recordValues(Gadget.self, key: .blob(Data(count: 16))) == nil)
            try records.storeRecord(Gadget.self, values: [key, .integer(0), .real(2.5), tags], exists: true)
        }
        #expect(try db.recover(Gadget.self, id: id) == Gadget(id: id, flag: false, weight: 2.5, tags: ["a", "b"]))
        let other = Value.blob(Data(repeating: 1, count: 16))
        let refusals: [(PersistenceError.Code, [Value], Bool)] = [
            (.invalidValue, [.blob(Data([1, 2, 3])), .integer(1), .real(1), tags], false),  // a UUID of 3 bytes
            (.invalidValue, [other, .integer(2), .real(1), tags], false),  // a Bool of 2
            (.invalidValue, [other, .integer(1), .real(1), .blob(Data("{".utf8))], false),  // JSON that doesn't parse
            (.invalidValue, [other, .text("yes"), .real(1), tags], false),  // another storage class
            (.invalidValue, [other, .null, .real(1), tags], false),  // nil in a required attribute
            (.invalidArgument, [other, .integer(1)], false),  // too few values
            (.notFound, [other, .integer(1), .real(1), tags], true),  // an update of no record
        ]
        for (code, values, exists) in refusals {
            expectError(code) {
                try db.write { try #require($0.recordAccess).storeRecord(Gadget.self, values: values, exists: exists) }
            }
        }
        #expect(try db.count(Gadget.self) == 1)
        // Foreign keys are checked as on a typed write.
        expectError(.referenceNotFound) {
            try db.write {
                try #require($0.recordAccess).storeRecord(
                    G.CascadeChild.self, values: [.integer(1), .integer(99)], exists: false)
            }
        }
        #expect(try db.count(G.CascadeChild.self) == 0)
    }
}
