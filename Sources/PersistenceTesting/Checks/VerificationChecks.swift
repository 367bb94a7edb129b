import Foundation
import PersistenceCore
import Testing

/// `verify()`: an intact store is sound, whatever ordinary writes it went through.
enum VerificationChecks {
    static let all: [ConformanceCheck] = [
        .database("verifies an intact store as sound after every kind of write") { try await intact($0) },
        .database("verifies an empty store as sound") { try await empty($0) },
    ]

    static func intact(_ db: some Database) async throws {
        let report = try writeAndVerify(db)
        let asynchronous = try await db.verify()
        #expect(asynchronous == report, "the async variant checks the same store the same way")
    }

    /// Writes in every way, then verifies synchronously.
    static func writeAndVerify(_ db: some Database) throws -> VerificationReport {
        // Creates, with nil and non-nil values in the indexed and unique attributes.
        try db.create(
            (1...40).map { Person(id: Int64($0), name: "P\($0 % 7)", email: $0 % 3 == 0 ? nil : "p\($0)@example.com") })
        try db.create((1...5).map { Tag(id: "tag \($0)", count: $0) })
        try db.create(Device(id: UUID(), label: "phone"))
        try db.create(AllTypes.sample(id: 1))
        try db.write { context in
            // Updates that move records between index keys, to nil and back, and swap a unique value.
            try context.update(Person(id: 1, name: "Renamed", email: nil))
            try context.update(Person(id: 3, name: "P3", email: "p1@example.com"))
            try context.update(Person(id: 2, name: "P2", email: "p2-new@example.com"))
            // Upserts: one replaces, one inserts.
            try context.upsert(Person(id: 4, name: "Upserted", email: "p4@example.com", age: 4))
            try context.upsert(Person(id: 100, name: "New", email: "new@example.com"))
            // Deletes: by id, by condition, and a whole type.
            try context.delete(Person.self, id: 5)
            try context.delete(Person.self, where: Field("name") == "P6")
            try context.deleteAll(Tag.self)
        }
        try db.create(Tag(id: "again", count: 1))
        let people: [Person] = try db.recover()
        let records = people.count + 1 + 1 + 1
        let expectedEntries = people.count + people.filter { $0.email != nil }.count

        let report = try db.verify()
        #expect(report.isSound, "\(report)")
        #expect(report.problems.isEmpty)
        #expect(report.problemCount == 0)
        #expect(report.entitiesChecked == conformanceEntities.count)
        #expect(report.recordsChecked == records)
        // Backends whose engine checks its own indexes (SQLite) count no entries.
        #expect(
            report.indexEntriesChecked == 0 || report.indexEntriesChecked == expectedEntries,
            "checked \(report.indexEntriesChecked) index entries, the store holds \(expectedEntries)")
        return report
    }

    static func empty(_ db: some Database) async throws {
        let report = try await db.verify()
        #expect(report.isSound, "\(report)")
        #expect(report.entitiesChecked == conformanceEntities.count)
        #expect(report.recordsChecked == 0)
        #expect(report.indexEntriesChecked == 0)
    }
}
