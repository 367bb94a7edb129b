import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// What an observation tracks: what its read touched, without being told — on every backend alike.
enum ObservationTrackingChecks {
    private typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        .database("tracks an entity the read uses but tracking: left out") { try await leftOut($0) },
        .database("tracks what each run of a read used, when that depends on the data") { try await dataDependent($0) },
        .database("tracks aliases and aggregates a read uses") { try await aliasesAndAggregates($0) },
        RelationshipChecks.examples("tracks the entities a condition on related records reaches") {
            try await related($0)
        },
        .database("starts a read typed by the backend's context, and refuses another backend's context") {
            try await typedContext($0)
        },
    ]

    static func leftOut(_ db: some Database) async throws {
        // Declares Person only; reads Tag too. A Tag write is seen all the same.
        var values = db.observe(tracking: [Person.self]) { context in
            try context.count(Person.self) + 10 * context.count(Tag.self)
        }.makeAsyncIterator()
        #expect(try await values.next() == 0)
        try await db.write { try $0.create(Tag(id: "t", count: 1)) }
        #expect(try await values.next() == 10)
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        #expect(try await values.next() == 11)
        // Declaring nothing at all: everything the read uses is tracked.
        var undeclared = ValueObservation.tracking { try $0.recover(Tag.self, id: "t")?.count }
            .values(in: db).makeAsyncIterator()
        #expect(try await undeclared.next() == .some(1))
        try await db.write { try $0.upsert(Tag(id: "t", count: 2)) }
        #expect(try await undeclared.next() == .some(2))
    }

    static func dataDependent(_ db: some Database) async throws {
        // The Tag is read only while Person 1 exists.
        let greeting = ValueObservation.tracking { context -> String in
            guard let person = try context.recover(Person.self, id: 1) else { return "nobody" }
            let tag = try context.recover(Tag.self, id: "t")
            return "\(person.name) \(tag?.count ?? 0)"
        }
        var values = greeting.values(in: db).makeAsyncIterator()
        #expect(try await values.next() == "nobody")
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        #expect(try await values.next() == "Ada 0")
        try await db.write { try $0.create(Tag(id: "t", count: 3)) }
        #expect(try await values.next() == "Ada 3", "a Tag read on this run only is tracked")
        try await db.write { try $0.delete(Person.self, id: 1) }
        #expect(try await values.next() == "nobody")
        #expect(db.observationHub.subscriberCount == 1)
    }

    static func aliasesAndAggregates(_ db: some Database) async throws {
        try await db.write { context in
            try context.create([Person(id: 1, name: "Ada", score: 2), Person(id: 2, name: "Bob", score: 5)])
        }
        let leader = ValueObservation.tracking { context -> String in
            let rows = try context.aggregate(Person.self, [.sum("score", as: "total")])
            let total = try rows.first?.value("total", as: Double.self) ?? 0
            let name = try context.alias("leader", as: Person.self)?.name ?? "none"
            return "\(name) \(total)"
        }
        var values = leader.values(in: db).makeAsyncIterator()
        #expect(try await values.next() == "none 7.0")
        try await db.write { try $0.setAlias("leader", to: Person.self, id: 2) }
        #expect(try await values.next() == "Bob 7.0")
        try await db.write { try $0.update(Person(id: 1, name: "Ada", score: 4)) }
        #expect(try await values.next() == "Bob 9.0")
    }

    static func related(_ db: some Database) async throws {
        try await db.write { context in
            try context.create([G.Department(id: 1, name: "Sales"), G.Department(id: 2, name: "Legal")])
        }
        // Departments that have an employee: reads Employee through the condition alone.
        let staffed = ValueObservation.tracking { context in
            try context.recover(G.Department.self, where: Related("employees").exists).map(\.name)
        }
        var values = staffed.values(in: db).makeAsyncIterator()
        #expect(try await values.next() == [])
        try await db.write { try $0.create(G.Employee(id: 1, name: "Ann", departmentID: 2)) }
        #expect(try await values.next() == ["Legal"])
        try await db.write { try $0.update(G.Employee(id: 1, name: "Ann", departmentID: 1)) }
        #expect(try await values.next() == ["Sales"])
    }

    static func typedContext<D: Database>(_ db: D) async throws {
        var count = ValueObservation.tracking { (context: D.Context) in try context.count(Person.self) }
            .values(in: db).makeAsyncIterator()
        #expect(try await count.next() == 0)
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        #expect(try await count.next() == 1)
        // A context type the database doesn't have: a typed error from the loop.
        var mismatched = ValueObservation.tracking { (_: ForeignContext) in 0 }.values(in: db).makeAsyncIterator()
        await expectAsyncError(.typeMismatch) { try await mismatched.next() }
        #expect(try await mismatched.next() == nil, "the observation ended with its error")
        #expect(db.observationHub.subscriberCount == 1)
    }

    /// A context no database has.
    final class ForeignContext: DatabaseContext {
        func create<E: Entity>(_ entity: E) throws { throw unsupported }
        func recover<E: Entity>(_ type: E.Type, query: Query) throws -> [E] { throw unsupported }
        func recover<E: Entity>(_ type: E.Type, id: E.ID) throws -> E? { throw unsupported }
        func count<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int { throw unsupported }
        func aggregate<E: Entity>(_ type: E.Type, query: AggregateQuery) throws -> [AggregateRow] { throw unsupported }
        func update<E: Entity>(_ entity: E) throws { throw unsupported }
        func upsert<E: Entity>(_ entity: E) throws -> UpsertOutcome { throw unsupported }
        func savepoint<R>(_ body: () throws -> R) throws -> R { throw unsupported }
        func delete<E: Entity>(_ type: E.Type, id: E.ID) throws -> Bool { throw unsupported }
        func delete<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> Int { throw unsupported }
        func deleteReporting<E: Entity>(_ type: E.Type, where condition: Condition?) throws -> DeletionReport {
            throw unsupported
        }
        func aliasTarget(named name: String) throws -> AliasTarget? { throw unsupported }
        func setAliasTarget(_ target: AliasTarget?, named name: String) throws { throw unsupported }
        private var unsupported: PersistenceError { PersistenceError(.invalidArgument, "not a real context") }
    }
}
