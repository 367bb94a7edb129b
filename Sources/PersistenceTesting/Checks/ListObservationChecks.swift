import Foundation
import Observation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// Lists as screens show them: differences by position, and the `@Observable` live query — on every backend.
enum ListObservationChecks {
    static let all: [ConformanceCheck] = [
        .database("delivers a sorted list's inserts, deletes, moves and updates by position") { try await moves($0) },
        .database("delivers differences that turn each list into the next, over 60 rounds of random writes") {
            try await randomizedDifferences($0)
        },
        .database("moves the record whose sort key changed, not a neighbour whose content changed") {
            try await sortKeyMoves($0)
        },
        .database("keeps a LiveQuery's value current, seen by withObservationTracking") { try await liveQuery($0) },
        .database("sets a LiveQuery's error when its read fails") { try await failingLiveQuery($0) },
    ]

    private static let byScore = ValueObservation.records(Person.self, sortedBy: [.ascending("score")])
    /// PostgreSQL may refuse a `SERIALIZABLE` write for as long as another long write runs on the same server (other
    /// tests' stores: see ``RetryPolicy/collisions(for:)``).
    private static let colliding = RetryPolicy.collisions(for: .seconds(120))

    static func moves(_ db: some Database) async throws {
        try await db.write { context in
            for (id, score) in [(1, 10.0), (2, 20), (3, 30), (4, 40)] {
                try context.create(Person(id: Int64(id), name: "P\(id)", score: score))
            }
        }
        var changes = byScore.differences().values(in: db).makeAsyncIterator()
        let first = try await changes.next()
        #expect(first?.elements.map(\.id) == [1, 2, 3, 4])
        #expect(first?.difference == ListDifference(insertions: [0, 1, 2, 3]), "the first value inserts everything")
        try await db.write(retrying: colliding) { context in
            try context.delete(Person.self, id: 2)  // [1, 3, 4] …
            try context.update(Person(id: 1, name: "P1", score: 35))  // moves after 3: [3, 1, 4]
            try context.update(Person(id: 4, name: "Four", score: 40))  // changes in place
            try context.create(Person(id: 5, name: "P5", score: 5))  // inserted first: [5, 3, 1, 4]
        }
        let change = try #require(try await changes.next())
        #expect(change.elements.map(\.id) == [5, 3, 1, 4])
        #expect(change.difference.deletions == [1])
        #expect(change.difference.insertions == [0])
        #expect(change.difference.moves == [ListDifference.Offsets(old: 0, new: 2)])
        #expect(
            change.difference.updates == [
                ListDifference.Offsets(old: 0, new: 2), ListDifference.Offsets(old: 3, new: 3),
            ])
        #expect(change.applied(to: first?.elements ?? []) == change.elements)
        // A write that leaves the list as it was (another score's record outside the sort's effect) is no change.
        try await db.write { try $0.update(Person(id: 4, name: "Four", score: 40)) }
        try await db.write { try $0.delete(Person.self, id: 5) }
        let next = try await changes.next()
        #expect(next?.difference == ListDifference(deletions: [0]))
    }

    static func sortKeyMoves(_ db: some Database) async throws {
        try await db.write { context in
            try context.create(Person(id: 2, name: "Two", score: 10))
            try context.create(Person(id: 1, name: "One", score: 20))
        }
        let sort: [Sort] = [.ascending("score"), .ascending("id")]
        // The same through a ValueObservation and through db.observe(…).
        var described = ValueObservation.records(Person.self, sortedBy: sort).differences().values(in: db)
            .makeAsyncIterator()
        var observed = db.observe(Person.self, sortedBy: sort).differences().makeAsyncIterator()
        let first = try #require(try await described.next())
        #expect(try await observed.next()?.elements == first.elements)
        #expect(first.elements.map(\.id) == [2, 1])
        try await db.write(retrying: colliding) { context in
            try context.update(Person(id: 1, name: "One", score: 5))  // its sort key: to the front
            try context.update(Person(id: 2, name: "Two, renamed", score: 10))  // its content only
        }
        for change in [try await described.next(), try await observed.next()] {
            let change = try #require(change)
            #expect(change.elements.map(\.id) == [1, 2])
            #expect(change.difference.moves == [ListDifference.Offsets(old: 1, new: 0)], "\(change.difference)")
            #expect(
                change.difference.updates == [
                    ListDifference.Offsets(old: 1, new: 0), ListDifference.Offsets(old: 0, new: 1),
                ])
            #expect(change.applied(to: first.elements) == change.elements)
        }
    }

    static func randomizedDifferences(_ db: some Database) async throws {
        var random = SeededGenerator(seed: 0x33)
        var changes = byScore.differences().values(in: db).makeAsyncIterator()
        var shown = try #require(try await changes.next()).elements
        #expect(shown.isEmpty)
        var nextID: Int64 = 1
        for round in 0..<60 {
            let stored = shown
            var edits: [Person] = []
            var deletions: Set<Int64> = []
            // At least one insert, so every round changes the list and delivers one value.
            for _ in 0...Int.random(in: 0...3, using: &random) {
                let score = Double(Int.random(in: 0...9, using: &random))
                edits.append(Person(id: nextID, name: "P\(nextID)", score: score))
                nextID += 1
            }
            for person in stored where Int.random(in: 0..<10, using: &random) == 0 { deletions.insert(person.id) }
            for var person in stored where !deletions.contains(person.id) {
                switch Int.random(in: 0..<8, using: &random) {
                case 0: person.score = Double(Int.random(in: 0...9, using: &random))  // moves, or not
                case 1: person.name += "'"  // changes in place
                case 2:
                    person.score = Double(Int.random(in: 0...9, using: &random))
                    person.name += "*"
                default: continue
                }
                edits.append(person)
            }
            // A server may refuse a write (nothing committed): again.
            try await db.write(retrying: colliding) { [edits, deletions] context in
                for id in deletions { try context.delete(Person.self, id: id) }
                for person in edits { try context.upsert(person) }
            }
            let change = try #require(try await changes.next(), "round \(round)")
            let expected = try await db.read { try $0.recover(Person.self, sortedBy: [.ascending("score")]) }
            #expect(change.elements == expected, "round \(round)")
            #expect(change.applied(to: shown) == expected, "round \(round): \(change.difference)")
            expectMinimal(change.difference, from: shown, to: expected, round: round)
            shown = expected
        }
    }

    /// Deletions and insertions are exactly the keys that left and came; updates exactly the kept records whose
    /// content changed; moves as few as can be; and applying needs nothing of the new list but its inserted and
    /// updated records.
    private static func expectMinimal(
        _ difference: ListDifference, from old: [Person], to new: [Person], round: Int
    ) {
        let oldIDs = Set(old.map(\.id))
        let newIDs = Set(new.map(\.id))
        #expect(difference.deletions.map { old[$0].id }.sorted() == oldIDs.subtracting(newIDs).sorted())
        #expect(difference.insertions.map { new[$0].id }.sorted() == newIDs.subtracting(oldIDs).sorted())
        let changed = new.filter { person in old.contains { $0.id == person.id && $0 != person } }
        #expect(difference.updates.map { new[$0.new].id }.sorted() == changed.map(\.id).sorted(), "round \(round)")
        for offsets in difference.moves + difference.updates {
            #expect(old[offsets.old].id == new[offsets.new].id, "round \(round)")
        }
        // As few moves as can be: every kept record but a longest run of them in their old order.
        let keptOld = new.compactMap { person in old.firstIndex { $0.id == person.id } }
        var runs: [Int] = []
        for index in keptOld.indices {
            let before = keptOld.indices.prefix(index).filter { keptOld[$0] < keptOld[index] }.map { runs[$0] }
            runs.append(1 + (before.max() ?? 0))
        }
        #expect(difference.moves.count == keptOld.count - (runs.max() ?? 0), "round \(round)")
        let readable = Set(difference.insertions).union(difference.updates.map(\.new))
        let masked = new.indices.map { readable.contains($0) ? new[$0] : Person(id: -1, name: "not to be read") }
        #expect(difference.applied(to: old, new: masked) == new, "round \(round)")
    }

    @MainActor
    static func liveQuery(_ db: some Database) async throws {
        let people = LiveQuery(.records(Person.self, sortedBy: [.ascending("name")]), in: db)
        #expect(people.value == [], "the first value is read when the model is made")
        #expect(people.isActive && people.error == nil)
        for (id, name) in [(1, "Ada"), (2, "Bob")] {
            let (changed, signal) = AsyncStream.makeStream(of: Void.self)
            withObservationTracking {
                _ = people.value
            } onChange: {
                signal.yield()
            }
            try await db.write { try $0.create(Person(id: Int64(id), name: name)) }
            var changes = changed.makeAsyncIterator()
            await changes.next()
            // onChange runs as the value is about to be set, on the main actor, which sets it before resuming this.
            #expect(people.value.map(\.name).last == name)
        }
        #expect(db.observationHub.subscriberCount == 1)
        people.cancel()
        #expect(!people.isActive)
        #expect(db.observationHub.subscriberCount == 0)
        // A record, and a custom read with a placeholder.
        let bob = LiveQuery(.record(Person.self, id: 2), in: db)
        #expect(bob.value?.name == "Bob")
        let count = LiveQuery(.tracking { try $0.count(Person.self) }, in: db, placeholder: -1)
        #expect(count.value == 2)
    }

    @MainActor
    static func failingLiveQuery(_ db: some Database) async throws {
        let strangers = LiveQuery(.records(Stranger.self), in: db)
        #expect(strangers.value == [])
        #expect((strangers.error as? PersistenceError)?.code == .unknownEntity)
        #expect(!strangers.isActive)
        #expect(db.observationHub.subscriberCount == 0)
    }
}
