import Foundation
import PersistenceCore
import Testing

/// Stale-data stamps on upsert, and reconciling a stored scope with an incoming set.
enum StampChecks {
    static let all: [ConformanceCheck] = [
        .database("ignores an upsert older than or as old as the stored stamp") { try dateStamps($0) },
        .database("keeps the stored stamp when the incoming one is nil") { try nilStamps($0) },
        .database("applies stamps inside batches and to integer versions") { try batches($0) },
        .database("reports inserts and updates of unstamped upserts") { try unstamped($0) },
        ConformanceCheck("refuses a stamp that is not a date or integer attribute") { backend, directory in
            for entity: any Entity.Type in [UnknownStamp.self, TextStamp.self] {
                let error = await #expect(throws: PersistenceError.self) {
                    try await withDatabase(backend, directory, [entity]) { _ in }
                }
                #expect(error?.code == .invalidSchema)
            }
        },
        .database("reconciles a scope: inserts, updates, deletes, leaves the rest") { try reconcile($0) },
        .database("deletes the whole scope and nothing else for an empty set") { try emptyReconcile($0) },
        .database("refuses duplicate keys and rolls back a failing reconcile") { try failingReconcile($0) },
        .database("respects stamps when reconciling") { try stampedReconcile($0) },
        // 100,000 records written and 16,000 changed: minutes on a loaded server.
        .database("reconciles 100,000 records", timeLimit: .seconds(900)) { try largeReconcile($0) },
    ]

    struct UnknownStamp: Entity {
        var id: Int64
        static let stampAttribute = "missing"
    }

    struct TextStamp: Entity {
        var id: Int64
        var etag: String
        static let stampAttribute = "etag"
    }

    static let t0 = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func dateStamps(_ db: some Database) throws {
        #expect(try db.upsert(Article(id: 1, title: "First", modifiedAt: t0)) == .inserted)
        #expect(try db.upsert(Article(id: 1, title: "Older", modifiedAt: t0 - 1)) == .ignoredAsStale)
        #expect(try db.upsert(Article(id: 1, title: "Same time", modifiedAt: t0)) == .ignoredAsStale)
        #expect(try db.recover(Article.self, id: 1) == Article(id: 1, title: "First", modifiedAt: t0))
        #expect(try db.upsert(Article(id: 1, title: "Newer", modifiedAt: t0 + 0.001)) == .updated)
        #expect(try db.recover(Article.self, id: 1) == Article(id: 1, title: "Newer", modifiedAt: t0 + 0.001))
        // update and create are explicit: they ignore stamps.
        try db.update(Article(id: 1, title: "Forced", modifiedAt: t0 - 100))
        #expect(try db.recover(Article.self, id: 1)?.title == "Forced")
    }

    static func nilStamps(_ db: some Database) throws {
        try db.create(Article(id: 1, title: "Stamped", modifiedAt: t0))
        #expect(try db.upsert(Article(id: 1, title: "Unstamped edit", modifiedAt: nil)) == .updated)
        #expect(try db.recover(Article.self, id: 1) == Article(id: 1, title: "Unstamped edit", modifiedAt: t0))
        // A stored nil stamp is older than any.
        try db.create(Article(id: 2, title: "Never stamped", modifiedAt: nil))
        #expect(try db.upsert(Article(id: 2, title: "Ancient", modifiedAt: .distantPast)) == .updated)
        #expect(try db.recover(Article.self, id: 2) == Article(id: 2, title: "Ancient", modifiedAt: .distantPast))
        #expect(try db.upsert(Article(id: 3, title: "New, unstamped", modifiedAt: nil)) == .inserted)
    }

    static func batches(_ db: some Database) throws {
        try db.create(Revision(id: "a", body: "v3", version: 3, ownerID: 1))
        let counts = try db.upsert([
            Revision(id: "a", body: "v2", version: 2, ownerID: 1),
            Revision(id: "b", body: "v1", version: 1, ownerID: 1),
            Revision(id: "a", body: "v4", version: 4, ownerID: 2),
            Revision(id: "a", body: "v4 again", version: 4, ownerID: 3),
        ])
        #expect(counts.inserted == 1 && counts.updated == 1 && counts.ignoredAsStale == 2, "\(counts)")
        #expect(try db.recover(Revision.self, id: "a") == Revision(id: "a", body: "v4", version: 4, ownerID: 2))
        // The index follows the kept record only.
        #expect(try db.recover(Revision.self, where: Field("ownerID") == 2).map(\.id) == ["a"])
        #expect(try db.recover(Revision.self, where: Field("ownerID") == 3).isEmpty)
        // Inside a write, outcomes come back one by one.
        try db.write { context throws in
            #expect(try context.upsert(Revision(id: "b", body: "v0", version: 0, ownerID: 1)) == .ignoredAsStale)
            #expect(try context.upsert(Revision(id: "b", body: "v9", version: 9, ownerID: 1)) == .updated)
            #expect(try context.recover(Revision.self, id: "b")?.body == "v9")
        }
    }

    static func unstamped(_ db: some Database) throws {
        #expect(try db.upsert(Person(id: 1, name: "Ada")) == .inserted)
        #expect(try db.upsert(Person(id: 1, name: "Ada again")) == .updated)
        #expect(try db.upsert(Person(id: 1, name: "Ada again")) == .updated)
        let counts = try db.upsert([Person(id: 1, name: "A"), Person(id: 2, name: "B")])
        #expect(counts.inserted == 1 && counts.updated == 1 && counts.ignoredAsStale == 0)
    }

    static func person(_ id: Int64, _ name: String? = nil) -> Person {
        Person(id: id, name: name ?? "p\(id)", age: id % 2 == 0 ? 20 : 30)
    }

    static func reconcile(_ db: some Database) throws {
        try db.create((1...10).map { person($0) })
        try db.create(Tag(id: "other", count: 1))
        let evens = Field("age") == 20
        // 2 and 10 unchanged, 4 changed, 6 and 8 gone, 12 new, 3 (stored outside the scope) moved into it.
        let incoming = [person(2), person(4, "changed"), person(10), person(12), Person(id: 3, name: "moved", age: 20)]
        let counts = try db.reconcile(Person.self, with: incoming, where: evens)
        #expect(counts.inserted == 1, "\(counts)")
        #expect(counts.updated == 2, "\(counts)")
        #expect(counts.unchanged == 2, "\(counts)")
        #expect(counts.deleted == 2, "\(counts)")
        #expect(counts.ignoredAsStale == 0, "\(counts)")
        #expect(try db.recover(Person.self, where: evens).map(\.id) == [2, 3, 4, 10, 12])
        #expect(try db.recover(Person.self, id: 4)?.name == "changed")
        // Outside the scope, untouched; other types too.
        #expect(try db.recover(Person.self, where: Field("age") == 30) == [1, 5, 7, 9].map { person($0) })
        #expect(try db.count(Tag.self) == 1)
        // Reconciling again with the same set changes nothing.
        let again = try db.reconcile(Person.self, with: incoming, where: evens)
        #expect(
            again
                == {
                    var c = ChangeCounts()
                    c.unchanged = 5
                    return c
                }())
        // No scope: the whole type.
        let all = try db.reconcile(Person.self, with: [person(1)])
        #expect(all.deleted == 8 && all.unchanged == 1, "\(all)")
        #expect(try db.recover(Person.self) == [person(1)])
    }

    static func emptyReconcile(_ db: some Database) throws {
        try db.create((1...10).map { person($0) })
        let counts = try db.reconcile(Person.self, with: [], where: Field("age") == 30)
        #expect(counts.deleted == 5 && counts.inserted == 0 && counts.updated == 0, "\(counts)")
        #expect(try db.recover(Person.self).map(\.id) == [2, 4, 6, 8, 10])
    }

    static func failingReconcile(_ db: some Database) throws {
        try db.create((1...4).map { Person(id: $0, name: "p\($0)", email: "p\($0)@example.com") })
        let before = try db.recover(Person.self)
        let duplicated = [Person(id: 1, name: "x"), Person(id: 5, name: "y"), Person(id: 1, name: "z")]
        expectError(.invalidArgument) { try db.reconcile(Person.self, with: duplicated) }
        // The unique email of a record the set keeps: the write fails after deleting and updating, and rolls back.
        let clashing = [
            Person(id: 1, name: "p1", email: "p1@example.com"), Person(id: 2, name: "p2", email: "changed@example.com"),
            Person(id: 9, name: "clash", email: "p1@example.com"),
        ]
        expectError(.uniqueViolation) { try db.reconcile(Person.self, with: clashing) }
        #expect(try db.recover(Person.self) == before)
        expectError(.unknownAttribute) { try db.reconcile(Person.self, with: [], where: Field("nope") == 1) }
        #expect(try db.recover(Person.self) == before)
    }

    static func stampedReconcile(_ db: some Database) throws {
        try db.create([
            Article(id: 1, title: "Fresh", modifiedAt: t0 + 10), Article(id: 2, title: "Old", modifiedAt: t0),
            Article(id: 3, title: "Same", modifiedAt: t0),
        ])
        let counts = try db.reconcile(
            Article.self,
            with: [
                Article(id: 1, title: "Stale copy", modifiedAt: t0), Article(id: 2, title: "Newer", modifiedAt: t0 + 1),
                Article(id: 3, title: "Same", modifiedAt: nil),
            ])
        #expect(counts.ignoredAsStale == 1 && counts.updated == 1 && counts.unchanged == 1, "\(counts)")
        #expect(try db.recover(Article.self).map(\.title) == ["Fresh", "Newer", "Same"])
    }

    static func largeReconcile(_ db: some Database) throws {
        let count = 100_000
        let stored = (0..<count).map { Person(id: Int64($0), name: "Person \($0)", age: $0 % 90) }
        try db.create(stored)
        // 10% changed, 5% removed, 1,000 new.
        var incoming: [Person] = []
        for person in stored where person.id % 20 != 7 {
            var copy = person
            if person.id % 10 == 3 { copy.name += " (changed)" }
            incoming.append(copy)
        }
        incoming += (count..<count + 1_000).map { Person(id: Int64($0), name: "New \($0)") }
        let counts = try db.reconcile(Person.self, with: incoming)
        #expect(counts.deleted == count / 20, "\(counts)")
        #expect(counts.updated == count / 10, "\(counts)")
        #expect(counts.inserted == 1_000, "\(counts)")
        #expect(counts.unchanged == count - count / 20 - count / 10, "\(counts)")
        #expect(try db.count(Person.self) == incoming.count)
        #expect(try db.recover(Person.self, id: 13)?.name == "Person 13 (changed)")
        #expect(try db.recover(Person.self, id: 7) == nil)
    }
}
