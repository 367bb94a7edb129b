import Foundation
import PersistenceCore
import Testing

/// Update, upsert and delete semantics.
enum MutationChecks {
    static let all: [ConformanceCheck] = [
        .database("updates existing records and refuses missing ones") { try update($0) },
        .database("upserts: inserts or replaces") { try upsert($0) },
        .database("deletes by object, id, condition and type") { try delete($0) },
        .database("keeps indexes right through updates and deletes") { try indexMaintenance($0) },
    ]

    static func update(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        var ada = QueryChecks.people()[0]
        ada.name = "Ada Lovelace"
        ada.email = nil
        ada.age = 37
        try db.update(ada)
        #expect(try db.recover(Person.self, id: 1) == ada)
        #expect(try db.count(Person.self) == 5)
        expectError(.notFound) { try db.update(Person(id: 42, name: "Ghost")) }
        #expect(try db.recover(Person.self, id: 42) == nil)
        try db.write { context in
            expectError(.notFound) { try context.update(Person(id: 43, name: "Ghost")) }
        }
        let renamed: [Person] = try db.recover(key: "name", value: "Ada Lovelace")
        #expect(renamed.map(\.id) == [1])
        let old: [Person] = try db.recover(key: "name", value: "Ada")
        #expect(old.isEmpty)
    }

    static func upsert(_ db: some Database) throws {
        let first = Person(id: 1, name: "Ada", email: "ada@example.com")
        try db.upsert(first)
        #expect(try db.recover(Person.self, id: 1) == first)
        let replacement = Person(id: 1, name: "Ada L.", email: nil, age: 36, score: 1)
        try db.upsert(replacement)
        #expect(try db.recover(Person.self, id: 1) == replacement)
        #expect(try db.count(Person.self) == 1)
        try db.upsert(Tag(id: "t", count: 1))
        try db.upsert(Tag(id: "t", count: 2))
        #expect(try db.recover(Tag.self, id: "t")?.count == 2)
        // The email freed by the replacement can be used again.
        try db.create(Person(id: 2, name: "Other", email: "ada@example.com"))
    }

    static func delete(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        #expect(try db.delete(QueryChecks.people()[0]))
        #expect(try db.delete(QueryChecks.people()[0]) == false, "deleting a missing record reports false")
        #expect(try db.delete(Person.self, id: 2))
        #expect(try db.delete(Person.self, id: 2) == false)
        #expect(try db.delete(Person.self, where: Field("age") == 36) == 1)
        let left: [Person] = try db.recover()
        #expect(left.map(\.id) == [3, 5])
        #expect(try db.delete(Person.self, where: Field("name") == "Nobody") == 0)
        try db.create(Tag(id: "keep", count: 1))
        #expect(try db.deleteAll(Person.self) == 2)
        #expect(try db.count(Person.self) == 0)
        #expect(try db.count(Tag.self) == 1, "deleting all of one type leaves the others")
        #expect(try db.deleteAll(Person.self) == 0)
    }

    static func indexMaintenance(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        try db.update(Person(id: 2, name: "Ada", email: nil, age: nil, score: 3))
        let adas: [Person] = try db.recover(key: "name", value: "Ada")
        #expect(adas.map(\.id) == [1, 2])
        try db.delete(Person.self, id: 1)
        let after: [Person] = try db.recover(key: "name", value: "Ada")
        #expect(after.map(\.id) == [2])
        try db.upsert(Person(id: 2, name: "Bob", email: "bob@example.com"))
        let bobs: [Person] = try db.recover(key: "email", value: "bob@example.com")
        #expect(bobs.map(\.id) == [2])
        let none: [Person] = try db.recover(key: "name", value: "Ada")
        #expect(none.isEmpty)
    }
}
