import Foundation
import PersistenceCore
import Testing

/// Entities that read and write their own records (``Entity/init(record:)``, ``Entity/encode(to:)-(AttributeWriter)``)
/// behave exactly like `Codable` ones: every type round-trips, records are interchangeable between the two kinds,
/// indexes and queries work, and mistakes in hand-written code are typed errors that store nothing.
enum HandWrittenRecordChecks {
    static let all: [ConformanceCheck] = [
        // HandWrittenAllTypes shares AllTypes' name, so it gets a database of its own.
        ConformanceCheck("hand-written records round-trip every attribute type") { backend, directory in
            try await withDatabase(backend, directory, [HandWrittenAllTypes.self]) { try everyType($0) }
        },
        .database("hand-written records are indexed, unique and queried") { try indexedAndQueried($0) },
        .database("hand-written record mistakes are typed errors that store nothing") { try mistakes($0) },
        ConformanceCheck("hand-written and Codable records read each other's") { backend, directory in
            try await interchangeable(backend, directory)
        },
    ]

    static func everyType(_ db: some Database) throws {
        var high = HandWrittenAllTypes(AllTypes.filled(id: 1))
        high.int = .max
        high.uint64 = UInt64(Int64.max)
        high.string = "Zoë 👩‍👩‍👧 \u{0} null inside"
        high.double = -.infinity
        let low = HandWrittenAllTypes(AllTypes.sample(id: 2))
        try db.create([high, low])
        #expect(try db.recover(HandWrittenAllTypes.self, id: 1) == high)
        #expect(try db.recover(HandWrittenAllTypes.self, id: 2) == low)
        let all: [HandWrittenAllTypes] = try db.recover(HandWrittenAllTypes.self)
        #expect(all.count == 2)
        var unsigned = low
        unsigned.id = 3
        unsigned.uint64 = UInt64(Int64.max) + 1
        #expect(throws: PersistenceError.self) { try db.create(unsigned) }
        #expect(try db.recover(HandWrittenAllTypes.self, id: 3) == nil)
    }

    static func indexedAndQueried(_ db: some Database) throws {
        let people = (1...20).map {
            HandWrittenPerson(
                id: Int64($0), name: "name \($0 % 4)", email: $0.isMultiple(of: 5) ? nil : "p\($0)@example.com",
                age: $0.isMultiple(of: 3) ? nil : $0, score: Double($0) / 4)
        }
        try db.create(people)
        let named: [HandWrittenPerson] = try db.recover(key: "name", value: "name 1")
        #expect(named.map(\.id).sorted() == [1, 5, 9, 13, 17])
        let byEmail: [HandWrittenPerson] = try db.recover(key: "email", value: "p7@example.com")
        #expect(byEmail == [people[6]])
        let adults = try db.recover(HandWrittenPerson.self, where: Field("age") > 15, sortedBy: [.ascending("age")])
        #expect(adults.map(\.id) == [16, 17, 19, 20])
        #expect(throws: PersistenceError.self) {
            try db.create(HandWrittenPerson(id: 99, name: "clash", email: "p2@example.com"))
        }
        var changed = people[1]
        changed.name = "renamed"
        changed.email = nil
        try db.update(changed)
        #expect(try db.recover(HandWrittenPerson.self, id: 2) == changed)
        let renamed: [HandWrittenPerson] = try db.recover(key: "name", value: "renamed")
        #expect(renamed == [changed])
        try db.delete(HandWrittenPerson.self, id: 2)
        #expect(try db.recover(HandWrittenPerson.self, id: 2) == nil)
        #expect(try db.recover(HandWrittenPerson.self).count == 19)
    }

    static func mistakes(_ db: some Database) throws {
        let good = MistakenRecord(id: 1, count: 3, ratio: 0.5, mistake: .none)
        try db.create(good)
        let cases: [(MistakenRecord.Mistake, PersistenceError.Code)] = [
            (.unknownAttribute, .invalidSchema), (.wrongType, .invalidValue), (.notANumber, .invalidValue),
        ]
        for (mistake, code) in cases {
            let bad = MistakenRecord(id: 2, count: 4, ratio: 1, mistake: mistake)
            // In a batch with a good record: the whole write is refused.
            let error = expectError(code, "\(mistake)") {
                try db.create([MistakenRecord(id: 3, count: 1, ratio: 1, mistake: .none), bad])
            }
            #expect(error.map { !$0.description.contains("many") } == true, "the value stays out of the error")
            #expect(try db.recover(MistakenRecord.self, id: 2) == nil)
            #expect(try db.recover(MistakenRecord.self, id: 3) == nil)
            expectError(code, "\(mistake)") {
                try db.update(MistakenRecord(id: 1, count: 9, ratio: 1, mistake: mistake))
            }
            #expect(try db.recover(MistakenRecord.self, id: 1) == good)
        }
        // Reading an attribute as the wrong type: a typed error for that read, the record untouched.
        try db.create(MistakenRecord(id: 4, count: 7, ratio: 2, mistake: .readsWrongType))
        expectError(.typeMismatch) { try db.recover(MistakenRecord.self, id: 4) }
        expectError(.typeMismatch) { try db.recover(MistakenRecord.self) }
        #expect(try db.recover(MistakenRecord.self, id: 1) == good)
    }

    static func interchangeable(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        let filled = AllTypes.filled(id: 1)
        let sample = AllTypes.sample(id: 2)
        try await withDatabase(backend, directory, [AllTypes.self]) { db in
            try db.create([filled, sample])
        }
        try await withDatabase(backend, directory, [HandWrittenAllTypes.self]) { db in
            #expect(try db.recover(HandWrittenAllTypes.self, id: 1) == HandWrittenAllTypes(filled))
            #expect(try db.recover(HandWrittenAllTypes.self, id: 2) == HandWrittenAllTypes(sample))
            var third = HandWrittenAllTypes(AllTypes.filled(id: 3))
            third.mood = .sad
            try db.create(third)
        }
        try await withDatabase(backend, directory, [AllTypes.self]) { db in
            let third = try #require(try db.recover(AllTypes.self, id: 3))
            #expect(HandWrittenAllTypes(third).mood == .sad)
            #expect(try db.recover(AllTypes.self).count == 3)
        }
    }
}
