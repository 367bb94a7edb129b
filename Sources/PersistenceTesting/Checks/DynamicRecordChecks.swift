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
        },
        ConformanceCheck("writes many records as values at once, all or nothing") { backend, directory in
            try await withDatabase(backend, directory, [Person.self] + G.ruleEntities) { try manyValues($0) }
        },
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

    /// `storeRecords`: inserts and replacements in one call (a multi-row statement on PostgreSQL), foreign keys
    /// checked at once — a record of the same call counts, also for a self-reference — and nothing stored when one
    /// record is refused.
    static func manyValues(_ db: some Database) throws {
        let person = { (id: Int64, name: String, email: String?) -> [Value] in
            [.integer(id), .text(name), email.map { .text($0) } ?? .null, .null, .real(0)]
        }
        try db.write { context in
            let records = try #require(context.recordAccess)
            try records.storeRecords(
                Person.self, rows: (1...700).map { person($0, "p\($0)", "p\($0)@example.com") },
                exists: Array(repeating: false, count: 700))
            // Replacements and inserts together, an integer given for a real attribute.
            try records.storeRecords(
                Person.self,
                rows: [person(1, "one", nil), [.integer(701), .text("new"), .null, .integer(30), .integer(2)]],
                exists: [true, false])
            try records.storeRecord(G.Parent.self, values: [.integer(1), .text("p")], exists: false)
            try records.storeRecords(
                G.CascadeChild.self, rows: [[.integer(1), .integer(1)], [.integer(2), .null]], exists: [false, false])
            // A tree written at once: parents named by records of the same call, in any order.
            try records.storeRecords(
                G.Node.self,
                rows: [[.text("leaf"), .text("mid")], [.text("mid"), .text("root")], [.text("root"), .null]],
                exists: [false, false, false])
        }
        #expect(try db.count(Person.self) == 701)
        #expect(try db.recover(Person.self, id: 1) == Person(id: 1, name: "one"))
        #expect(try db.recover(Person.self, id: 701) == Person(id: 701, name: "new", age: 30, score: 2))
        #expect(try db.recover(Person.self, id: 700)?.email == "p700@example.com")
        #expect(try db.count(G.Node.self) == 3)
        // Refusals leave every record of the call unwritten, and the transaction usable.
        let refusals: [(PersistenceError.Code, (any RecordValueAccess) throws -> Void)] = [
            // A unique index (the second record takes the first's email).
            (
                .uniqueViolation,
                {
                    try $0.storeRecords(
                        Person.self, rows: [person(800, "a", "fresh@example.com"), person(801, "b", "p5@example.com")],
                        exists: [false, false])
                }
            ),
            // A reference to no record.
            (
                .referenceNotFound,
                {
                    try $0.storeRecords(
                        G.CascadeChild.self, rows: [[.integer(3), .integer(1)], [.integer(4), .integer(99)]],
                        exists: [false, false])
                }
            ),
            (
                .invalidValue,
                {
                    try $0.storeRecords(
                        Person.self, rows: [person(802, "c", nil), [.integer(803), .null, .null, .null, .real(0)]],
                        exists: [false, false])
                }
            ),
            // A record to insert that is stored, one to replace that isn't.
            (
                .duplicateKey,
                {
                    try $0.storeRecords(
                        Person.self, rows: [person(805, "f", nil), person(7, "g", nil)], exists: [false, false])
                }
            ),
            (
                .notFound,
                {
                    try $0.storeRecords(
                        Person.self, rows: [person(7, "h", nil), person(806, "i", nil)], exists: [true, true])
                }
            ),
            (
                .invalidArgument,
                {
                    try $0.storeRecords(
                        Person.self, rows: [person(804, "d", nil), person(804, "e", nil)], exists: [false, false])
                }
            ),
        ]
        for (code, write) in refusals {
            try db.write { context in
                let records = try #require(context.recordAccess)
                expectError(code) { try write(records) }
                // The transaction goes on after the refusal.
                try records.storeRecord(Person.self, values: person(900, "after", nil), exists: false)
                _ = try records.deleteRecord(Person.self, key: .integer(900))
            }
        }
        #expect(try db.count(Person.self) == 701)
        #expect(try db.count(Person.self, where: Field("id") >= 800) == 0)
        #expect(try db.count(G.CascadeChild.self) == 2)
        #expect(try db.recover(Person.self, id: 5)?.name == "p5")
        #expect(try db.recover(Person.self, id: 7)?.name == "p7")
    }
}
