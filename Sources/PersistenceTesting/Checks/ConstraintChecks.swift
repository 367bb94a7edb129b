import Foundation
import PersistenceCore
import Testing

/// Primary keys and unique constraints: violations are typed errors that change nothing.
enum ConstraintChecks {
    static let all: [ConformanceCheck] = [
        .database("refuses a duplicate primary key and changes nothing") { try duplicateKey($0) },
        .database("enforces unique constraints, letting nils coexist") { try unique($0) },
        .database("creates a batch all or nothing") { try batch($0) },
    ]

    static func duplicateKey(_ db: some Database) throws {
        let original = Person(id: 1, name: "Ada", email: "ada@example.com", age: 36)
        try db.create(original)
        expectError(.duplicateKey) { try db.create(Person(id: 1, name: "Imposter", email: "other@example.com")) }
        #expect(try db.recover(Person.self, id: 1) == original)
        #expect(try db.count(Person.self) == 1)
        // Inside a write, the failed insert changes nothing and the transaction goes on.
        try db.write { context in
            expectError(.duplicateKey) { try context.create(Person(id: 1, name: "Again")) }
            try context.create(Person(id: 2, name: "Grace"))
        }
        #expect(try db.recover(Person.self, id: 1) == original)
        #expect(try db.count(Person.self) == 2)
        try db.create(Tag(id: "x", count: 1))
        expectError(.duplicateKey) { try db.create(Tag(id: "x", count: 2)) }
        #expect(try db.recover(Tag.self, id: "x")?.count == 1)
    }

    static func unique(_ db: some Database) throws {
        try db.create(Person(id: 1, name: "Ada", email: "ada@example.com"))
        expectError(.uniqueViolation) { try db.create(Person(id: 2, name: "Ada 2", email: "ada@example.com")) }
        #expect(try db.count(Person.self) == 1)
        try db.create(Person(id: 3, name: "No mail"))
        try db.create(Person(id: 4, name: "No mail either"))
        #expect(try db.count(Person.self) == 3, "records with nil in a unique attribute never collide")
        try db.create(Person(id: 5, name: "Bea", email: "bea@example.com"))
        expectError(.uniqueViolation) { try db.update(Person(id: 5, name: "Bea", email: "ada@example.com")) }
        expectError(.uniqueViolation) { try db.upsert(Person(id: 6, name: "Cy", email: "bea@example.com")) }
        #expect(try db.recover(Person.self, id: 5)?.email == "bea@example.com")
        #expect(try db.recover(Person.self, id: 6) == nil)
        // Freed values can be taken again.
        try db.delete(Person.self, id: 1)
        try db.create(Person(id: 7, name: "New Ada", email: "ada@example.com"))
        let found: [Person] = try db.recover(key: "email", value: "ada@example.com")
        #expect(found.map(\.id) == [7])
    }

    static func batch(_ db: some Database) throws {
        try db.create(Person(id: 5, name: "Existing"))
        let batch = (1...10).map { Person(id: Int64($0), name: "P\($0)") }
        expectError(.duplicateKey) { try db.create(batch) }
        #expect(try db.count(Person.self) == 1, "a failing batch leaves nothing behind")
        try db.create(batch.filter { $0.id != 5 })
        #expect(try db.count(Person.self) == 10)
    }
}
