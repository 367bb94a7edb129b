import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// Observation: observed queries, change sets, aliases — the same on every backend.
enum ObservationChecks {
    struct Abort: Error {}

    static let all: [ConformanceCheck] = [
        .database("observes a query: the current value, then one per commit touching its type") { try await query($0) },
        .database("observes one record by primary key, nil while there is none") { try await record($0) },
        .database("ends an observation when its task is cancelled, leaving nothing subscribed") {
            try await cancellation($0)
        },
        .database("ends on the final value of 1,000 rapid commits, in order, with a slow consumer") {
            try await rapidCommits($0)
        },
        .database("never delivers an out-of-order value while many tasks write") { try await manyWriters($0) },
        .database("throws from the loop when the observed read fails") { try await failingRead($0) },
        .database("publishes change sets that match each commit's net writes") { try await changeSets($0) },
        .database("bounds what a change-set observation nobody reads holds, with one incomplete change set") {
            try await unreadChangeSets($0)
        },
        .database("keeps aliases in the transaction that sets them") { try aliases($0) },
        .database("observes an alias: the record, its updates, nil when deleted or removed") {
            try await observedAlias($0)
        },
        .database("observes a list alias in its order") { try await observedListAlias($0) },
        ConformanceCheck("keeps aliases across a restart") { backend, directory in
            try await aliasesAcrossRestart(backend, directory)
        },
        ConformanceCheck("tells observers of writes through another database on the same store") {
            backend, directory in
            try await otherDatabase(backend, directory)
        },
    ]

    static func query(_ db: some Database) async throws {
        var values = db.observe(Person.self, sortedBy: [.ascending("name")]).makeAsyncIterator()
        #expect(try await values.next() == [])
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        #expect(try await values.next()?.map(\.name) == ["Ada"])
        // Neither a write to another type nor a rolled-back write produces a value: the next one is the next
        // commit touching Person.
        try await db.write { try $0.create(Tag(id: "t", count: 1)) }
        await #expect(throws: Abort.self) {
            try await db.write { context in
                try context.create(Person(id: 2, name: "Rolled back"))
                throw Abort()
            }
        }
        try await db.write { try $0.create(Person(id: 3, name: "Bob")) }
        #expect(try await values.next()?.map(\.name) == ["Ada", "Bob"])
        try await db.write { try $0.update(Person(id: 1, name: "Cy")) }
        #expect(try await values.next()?.map(\.name) == ["Bob", "Cy"])
        try await db.write { try $0.delete(Person.self, id: 3) }
        #expect(try await values.next()?.map(\.name) == ["Cy"])
        // A condition is part of the observation.
        var filtered = db.observe(Person.self, where: Field("name") == "Dee").makeAsyncIterator()
        #expect(try await filtered.next() == [])
        try await db.write { try $0.create(Person(id: 4, name: "Dee")) }
        #expect(try await filtered.next()?.map(\.id) == [4])
    }

    static func record(_ db: some Database) async throws {
        var values = db.observe(Tag.self, id: "a").makeAsyncIterator()
        #expect(try await values.next() == .some(nil))
        try await db.write { try $0.create(Tag(id: "a", count: 1)) }
        #expect(try await values.next() == Tag(id: "a", count: 1))
        try await db.write { try $0.upsert(Tag(id: "a", count: 2)) }
        #expect(try await values.next() == Tag(id: "a", count: 2))
        try await db.write { try $0.delete(Tag.self, id: "a") }
        #expect(try await values.next() == .some(nil))
    }

    static func cancellation<D: Database>(_ db: D) async throws {
        #expect(db.observationHub.subscriberCount == 0)
        let (started, signal) = AsyncStream.makeStream(of: Int.self)
        let task = Task {
            var seen = 0
            for try await people in db.observe(Person.self) {
                seen += 1
                signal.yield(people.count)
            }
            return seen
        }
        var starts = started.makeAsyncIterator()
        #expect(await starts.next() == 0)
        #expect(db.observationHub.subscriberCount == 1)
        task.cancel()
        let seen = try await task.value
        #expect(seen == 1, "a cancelled observation ends without another value")
        #expect(db.observationHub.subscriberCount == 0, "a cancelled observation is unsubscribed")
        // A commit after the end reaches no one, and a dropped (never iterated) observation unsubscribes too.
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        do {
            let unused = db.observe(Person.self)
            _ = db.changes(of: Person.self)
            #expect(db.observationHub.subscriberCount == 1)
            _ = unused
        }
        #expect(db.observationHub.subscriberCount == 0, "a released observation is unsubscribed")
        // A change-set observation ends on cancellation as well.
        let changes = Task {
            var count = 0
            for await _ in db.changes(of: Person.self) { count += 1 }
            return count
        }
        changes.cancel()
        _ = await changes.value
        #expect(db.observationHub.subscriberCount == 0)
    }

    static func rapidCommits<D: Database>(_ db: D) async throws {
        let total = 1_000
        let observation = db.observe(tracking: [Person.self]) { try $0.count(Person.self) }
        let consumer = Task {
            var counts: [Int] = []
            for try await count in observation {
                counts.append(count)
                // A slow consumer: each value costs it another read.
                _ = try await db.read { try $0.recover(Person.self, query: Query(limit: 10)) }
                if count == total { break }
            }
            return counts
        }
        for id in 1...total {
            try await db.write { try $0.create(Person(id: Int64(id), name: "P\(id)")) }
        }
        let counts = try await consumer.value
        #expect(counts.last == total, "the observation ends on the final value")
        #expect(counts == counts.sorted(), "values come in commit order")
        #expect(counts.count <= total + 1)
    }

    static func manyWriters<D: Database>(_ db: D) async throws {
        let writers = 16
        let perWriter = 20
        let total = writers * perWriter
        let observation = db.observe(tracking: [Person.self]) { try $0.count(Person.self) }
        let consumer = Task {
            var counts: [Int] = []
            for try await count in observation {
                counts.append(count)
                if count == total { break }
            }
            return counts
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for index in 0..<perWriter {
                        try await db.write { try $0.create(Person(id: Int64(writer * perWriter + index), name: "W")) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let counts = try await consumer.value
        #expect(counts.last == total)
        #expect(counts == counts.sorted(), "an observer saw a value older than one it had seen")
    }

    static func failingRead(_ db: some Database) async throws {
        var strangers = db.observe(Stranger.self).makeAsyncIterator()
        await expectAsyncError(.unknownEntity, "observing an entity outside the model") { try await strangers.next() }
        #expect(try await strangers.next() == nil, "the observation ended with its error")
        var unknown = db.observe(Person.self, where: Field("shoeSize") == 42).makeAsyncIterator()
        await expectAsyncError(.unknownAttribute, "observing an unknown attribute") { try await unknown.next() }
        #expect(db.observationHub.subscriberCount == 0)
    }

    static func unreadChangeSets(_ db: some Database) async throws {
        // Within the bound, every change set is kept, complete.
        var kept = db.changes(of: Person.self).makeAsyncIterator()
        for id in 1...3 { try await db.write { try $0.create(Person(id: Int64(id), name: "P\(id)")) } }
        for id in 1...3 { #expect(await kept.next()?.inserted == [Int64(id)]) }
        // Past 1,000 unread change sets, the buffer becomes one incomplete change set, and commits while it waits
        // fold into it; what comes after it is complete again.
        var slow = db.changes(of: Person.self).makeAsyncIterator()
        for id in 100..<1_101 { try await db.write { try $0.create(Person(id: Int64(id), name: "P\(id)")) } }
        try await db.write { try $0.create(Person(id: 1_000_000, name: "late")) }
        let collapsed = await slow.next()
        #expect(collapsed?.isComplete == false && collapsed?.isEmpty == true, "\(String(describing: collapsed))")
        try await db.write { try $0.create(Person(id: 1_000_001, name: "next")) }
        let next = await slow.next()
        #expect(next?.inserted == [1_000_001] && next?.isComplete == true, "\(String(describing: next))")
    }

    static func changeSets(_ db: some Database) async throws {
        var changes = db.changes(of: Person.self).makeAsyncIterator()
        try await db.write { context in
            for id in 1...5 { try context.create(Person(id: Int64(id), name: "P\(id)")) }
        }
        var change = await changes.next()
        #expect(change?.inserted == [1, 2, 3, 4, 5])
        #expect(change?.updated == [] && change?.deleted == [] && change?.isComplete == true)

        // Other types and rolled-back writes make no change set.
        try await db.write { try $0.create(Tag(id: "t", count: 1)) }
        await #expect(throws: Abort.self) {
            try await db.write { context in
                try context.delete(Person.self, id: 1)
                throw Abort()
            }
        }
        try await db.write { context in
            try context.update(Person(id: 2, name: "Two"))
            try context.delete(Person.self, id: 3)
            try context.upsert(Person(id: 6, name: "Six"))  // inserts
            try context.upsert(Person(id: 1, name: "One"))  // updates
            try context.create(Person(id: 7, name: "Brief"))
            try context.delete(Person.self, id: 7)  // inserted and deleted: not a change
            try context.delete(Person.self, id: 4)
            try context.create(Person(id: 4, name: "Again"))  // deleted and inserted: updated
            #expect(try context.delete(Person.self, id: 99) == false)  // nothing deleted
        }
        change = await changes.next()
        #expect(change?.inserted == [6])
        #expect(change?.updated == [2, 1, 4])
        #expect(change?.deleted == [3])
        #expect(change?.isComplete == true)

        try await db.write { try $0.delete(Person.self, where: Field("name") == "Two" || Field("name") == "Six") }
        change = await changes.next()
        #expect(change.map { Set($0.deleted) } == [2, 6])
        #expect(change?.inserted == [] && change?.updated == [])
        try await db.write { try $0.deleteAll(Person.self) }
        change = await changes.next()
        #expect(change.map { Set($0.deleted) } == [1, 4, 5])
        #expect(change?.isComplete == true)

        // Text and UUID keys come back typed.
        var tags = db.changes(of: Tag.self).makeAsyncIterator()
        try await db.write { try $0.upsert(Tag(id: "t", count: 2)) }
        #expect(await tags.next()?.updated == ["t"])
        let id = UUID()
        var devices = db.changes(of: Device.self).makeAsyncIterator()
        try await db.write { try $0.create(Device(id: id, label: "phone")) }
        #expect(await devices.next()?.inserted == [id])
    }

    static func aliases(_ db: some Database) throws {
        try db.create([Person(id: 1, name: "Ada"), Person(id: 2, name: "Bob"), Person(id: 3, name: "Cy")])
        try db.write { context throws in
            try context.setAlias("currentUser", to: Person(id: 1, name: "Ada"))
            try context.setAlias("team", to: Person.self, ids: [3, 1, 2])
        }
        try db.read { context throws in
            #expect(try context.alias("currentUser", as: Person.self)?.name == "Ada")
            #expect(try context.aliasList("team", as: Person.self).map(\.id) == [3, 1, 2])
            #expect(try context.alias("nobody", as: Person.self) == nil)
            #expect(try context.aliasList("nobody", as: Person.self) == [])
            expectError(.typeMismatch) { try context.alias("currentUser", as: Tag.self) }
            expectError(.typeMismatch) { try context.alias("team", as: Person.self) }
            expectError(.readOnly) { try context.setAlias("x", to: Person(id: 1, name: "Ada")) }
        }
        // An alias rolls back with its write.
        #expect(throws: Abort.self) {
            try db.write { context throws in
                try context.setAlias("currentUser", to: Person.self, id: 2)
                try context.removeAlias("team")
                #expect(try context.alias("currentUser", as: Person.self)?.name == "Bob", "a write reads its alias")
                throw Abort()
            }
        }
        #expect(try db.read { try $0.alias("currentUser", as: Person.self)?.id } == 1)
        #expect(try db.read { try $0.aliasList("team", as: Person.self).count } == 3)
        // A deleted record reads as nil (a list skips it), and again once a record has its key.
        try db.delete(Person.self, id: 1)
        #expect(try db.read { try $0.alias("currentUser", as: Person.self) } == nil)
        #expect(try db.read { try $0.aliasList("team", as: Person.self).map(\.id) } == [3, 2])
        try db.create(Person(id: 1, name: "Ada again"))
        #expect(try db.read { try $0.alias("currentUser", as: Person.self)?.name } == "Ada again")
        // Removing.
        #expect(try db.write { try $0.removeAlias("currentUser") } == true)
        #expect(try db.write { try $0.removeAlias("currentUser") } == false)
        #expect(try db.read { try $0.alias("currentUser", as: Person.self) } == nil)
        // Names are validated; values never spliced; entities must be in the model.
        try db.write { context throws in
            expectError(.invalidName) { try context.setAlias("", to: Person(id: 1, name: "")) }
            expectError(.invalidName) {
                try context.setAlias(String(repeating: "a", count: 256), to: Tag.self, id: "t")
            }
            expectError(.unknownEntity) { try context.setAlias("s", to: Stranger(id: 1)) }
            let injection = "x'); DROP TABLE \"Person\"; --"
            try context.setAlias(injection, to: Tag.self, ids: [])
            #expect(try context.aliasList(injection, as: Tag.self) == [])
        }
        #expect(try db.count(Person.self) == 3)
    }

    static func observedAlias(_ db: some Database) async throws {
        var user = db.observeAlias("currentUser", as: Person.self).makeAsyncIterator()
        #expect(try await user.next() == .some(nil))
        try await db.write { context in
            try context.create(Person(id: 1, name: "Ada"))
            try context.setAlias("currentUser", to: Person(id: 1, name: "Ada"))
        }
        #expect(try await user.next()??.name == "Ada")
        try await db.write { try $0.update(Person(id: 1, name: "Ada L.")) }
        #expect(try await user.next()??.name == "Ada L.")
        try await db.write { try $0.delete(Person.self, id: 1) }
        #expect(try await user.next() == .some(nil), "a deleted record reads as nil")
        try await db.write { context in
            try context.create(Person(id: 2, name: "Bob"))
            try context.setAlias("currentUser", to: Person.self, id: 2)
        }
        #expect(try await user.next()??.name == "Bob")
        // Another alias changing is not this one's business; this one's removal is.
        try await db.write { try $0.setAlias("other", to: Person.self, id: 2) }
        try await db.write { try $0.removeAlias("currentUser") }
        #expect(try await user.next() == .some(nil), "a removed alias reads as nil")
    }

    static func observedListAlias(_ db: some Database) async throws {
        try await db.write { context in
            for id in 1...3 { try context.create(Person(id: Int64(id), name: "P\(id)")) }
        }
        var team = db.observeAliasList("team", as: Person.self).makeAsyncIterator()
        #expect(try await team.next() == [])
        try await db.write { try $0.setAlias("team", to: Person.self, ids: [3, 1]) }
        #expect(try await team.next()?.map(\.id) == [3, 1])
        try await db.write { try $0.setAlias("team", to: Person.self, ids: [2, 3, 1]) }
        #expect(try await team.next()?.map(\.id) == [2, 3, 1])
        try await db.write { try $0.delete(Person.self, id: 3) }
        #expect(try await team.next()?.map(\.id) == [2, 1])
    }

    static func aliasesAcrossRestart(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { try setAliases($0) }
        try await withDatabase(backend, directory, conformanceEntities) { try readAliases($0) }
    }

    private static func setAliases(_ db: some Database) throws {
        try db.create([Person(id: 1, name: "Ada"), Person(id: 2, name: "Bob")])
        try db.write { context throws in
            try context.setAlias("currentUser", to: Person.self, id: 2)
            try context.setAlias("team", to: Person.self, ids: [2, 1])
        }
    }

    private static func readAliases(_ db: some Database) throws {
        #expect(try db.read { try $0.alias("currentUser", as: Person.self)?.name } == "Bob")
        #expect(try db.read { try $0.aliasList("team", as: Person.self).map(\.id) } == [2, 1])
    }

    static func otherDatabase(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        try await withDatabase(backend, directory, conformanceEntities) { first in
            try await observeOther(first, backend, directory)
        }
    }

    private static func observeOther(_ first: some Database, _ backend: any ConformanceBackend, _ directory: URL)
        async throws
    {
        var people = first.observe(Person.self).makeAsyncIterator()
        #expect(try await people.next() == [])
        try await withDatabase(backend, directory, conformanceEntities) { second in
            try await createElsewhere(second)
        }
        // Noticed at once on a shared environment (LMDB), or when asked (SQLite: another connection).
        try first.checkForExternalChanges()
        #expect(try await people.next()?.map(\.name) == ["From elsewhere"])
        #expect(try first.checkForExternalChanges() == false, "nothing new since")
    }

    private static func createElsewhere(_ db: some Database) async throws {
        try await db.write { try $0.create(Person(id: 1, name: "From elsewhere")) }
    }
}
