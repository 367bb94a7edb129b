import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization
import Testing

/// Observation as apps consume it: no duplicates, reusable descriptions, the first value at once and later ones on
/// an actor, cancellation — the same on every backend.
enum AppObservationChecks {
    static let all: [ConformanceCheck] = [
        .database("leaves out a value equal to the last one delivered, unless told to deliver it") {
            try await duplicates($0)
        },
        .database("compares values with removeDuplicates(by:), on a description and on observe(…)") {
            try await customDuplicates($0)
        },
        .database("starts one description many times, each start an independent observation") {
            try await reusable($0)
        },
        ConformanceCheck("starts one description on two databases, each seeing its own commits") {
            backend, directory in
            try await twoDatabases(backend, directory)
        },
        .database("delivers the first value before start returns, later ones on the main actor") {
            try await mainActorStart($0)
        },
        .database("delivers no value after its token is cancelled or released, and leaves no observer") {
            try await tokenCancellation($0)
        },
        .database("delivers the first value on the caller's actor and later ones there too") {
            try await actorStart($0)
        },
        .database("reports a failing first read to onError before start returns") { try await failingStart($0) },
    ]

    /// A read that signals each time it runs, so a check can wait until the observation has read after a commit.
    struct SignallingRead: Sendable {
        let runs: AsyncStream<Void>
        let signal: AsyncStream<Void>.Continuation

        init() { (runs, signal) = AsyncStream.makeStream(of: Void.self) }
    }

    static func duplicates(_ db: some Database) async throws {
        for deliversDuplicates in [false, true] {
            try await db.write { _ = try $0.deleteAll(Person.self) }
            let read = SignallingRead()
            var observation = ValueObservation.tracking([Person.self]) { context -> [String] in
                defer { read.signal.yield() }
                return try context.recover(Person.self, where: Field("name") == "Ada").map(\.name)
            }
            if deliversDuplicates { observation = observation.allowingDuplicates() }
            let consumer = Task {
                var delivered: [[String]] = []
                for try await names in observation.values(in: db) {
                    delivered.append(names)
                    if !names.isEmpty { break }
                }
                return delivered
            }
            var runs = read.runs.makeAsyncIterator()
            await runs.next()
            // Commits that leave the result as it was: the observation reads again (awaited here) and, unless told
            // otherwise, delivers nothing.
            try await db.write { try $0.create(Person(id: 1, name: "Bob")) }
            await runs.next()
            try await db.write { try $0.update(Person(id: 1, name: "Bob", age: 3)) }
            await runs.next()
            try await db.write { try $0.create(Person(id: 2, name: "Ada")) }
            let delivered = try await consumer.value
            #expect(delivered == (deliversDuplicates ? [[], [], [], ["Ada"]] : [[], ["Ada"]]))
        }
    }

    static func customDuplicates(_ db: some Database) async throws {
        let read = SignallingRead()
        let counts = ValueObservation.tracking([Person.self]) { context -> [Person] in
            defer { read.signal.yield() }
            return try context.recover(Person.self, sortedBy: [.ascending("id")])
        }.removeDuplicates { $0.count == $1.count }
        let consumer = Task {
            var delivered: [[String]] = []
            for try await people in counts.values(in: db) {
                delivered.append(people.map(\.name))
                if people.count == 2 { break }
            }
            return delivered
        }
        var runs = read.runs.makeAsyncIterator()
        await runs.next()
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        await runs.next()
        try await db.write { try $0.update(Person(id: 1, name: "Ada L.")) }  // same count: left out
        await runs.next()
        try await db.write { try $0.create(Person(id: 2, name: "Bob")) }
        #expect(try await consumer.value == [[], ["Ada"], ["Ada L.", "Bob"]])

        // The same on what observe(…) returns.
        var ages = db.observe(Person.self, id: 1).removeDuplicates { $0?.age == $1?.age }.makeAsyncIterator()
        #expect(try await ages.next()??.name == "Ada L.")
        try await db.write { try $0.update(Person(id: 1, name: "Renamed")) }  // same age: left out
        try await db.write { try $0.update(Person(id: 1, name: "Renamed", age: 36)) }
        #expect(try await ages.next()??.age == 36)
    }

    static func reusable(_ db: some Database) async throws {
        let people = ValueObservation.records(Person.self, sortedBy: [.ascending("name")])
        var first = people.values(in: db).makeAsyncIterator()
        var second = people.values(in: db).makeAsyncIterator()
        #expect(try await first.next() == [])
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        #expect(try await first.next()?.map(\.name) == ["Ada"])
        // The second start registered when made: its first value already has the commit.
        #expect(try await second.next()?.map(\.name) == ["Ada"])
        #expect(db.observationHub.subscriberCount == 2)
        // Ending one leaves the other running.
        first = people.values(in: db).makeAsyncIterator()
        #expect(db.observationHub.subscriberCount == 2)
        try await db.write { try $0.create(Person(id: 2, name: "Bob")) }
        #expect(try await second.next()?.map(\.name) == ["Ada", "Bob"])
        #expect(try await first.next()?.map(\.name) == ["Ada", "Bob"])
    }

    static func twoDatabases(_ backend: any ConformanceBackend, _ directory: URL) async throws {
        let people = ValueObservation.records(Person.self)
        let one = directory.appendingPathComponent("one", isDirectory: true)
        let two = directory.appendingPathComponent("two", isDirectory: true)
        for subdirectory in [one, two] {
            try FileManager.default.createDirectory(at: subdirectory, withIntermediateDirectories: true)
        }
        try await withDatabase(backend, one, conformanceEntities) { first in
            try await withDatabase(backend, two, conformanceEntities) { second in
                try await observeBoth(people, first, second)
            }
        }
    }

    private static func observeBoth(
        _ people: ValueObservation<[Person]>, _ first: some Database, _ second: some Database
    ) async throws {
        var one = people.values(in: first).makeAsyncIterator()
        var two = people.values(in: second).makeAsyncIterator()
        #expect(try await one.next() == [])
        #expect(try await two.next() == [])
        try await first.write { try $0.create(Person(id: 1, name: "In one")) }
        try await second.write { try $0.create(Person(id: 1, name: "In two")) }
        #expect(try await one.next()?.map(\.name) == ["In one"])
        #expect(try await two.next()?.map(\.name) == ["In two"])
    }

    /// Values a callback received, on the main actor.
    @MainActor
    final class Received<Value: Sendable> {
        var values: [Value] = []
        var errors: [any Error] = []
        let arrivals: AsyncStream<Void>
        private let signal: AsyncStream<Void>.Continuation

        init() { (arrivals, signal) = AsyncStream.makeStream(of: Void.self) }

        func append(_ value: Value) {
            values.append(value)
            signal.yield()
        }

        func fail(_ error: any Error) {
            errors.append(error)
            signal.yield()
        }
    }

    @MainActor
    static func mainActorStart(_ db: some Database) async throws {
        let received = Received<[String]>()
        let token = ValueObservation.records(Person.self, sortedBy: [.ascending("name")]).start(in: db) { people in
            MainActor.assertIsolated()
            received.append(people.map(\.name))
        }
        #expect(received.values == [[]], "the first value is there when start returns")
        var arrivals = received.arrivals.makeAsyncIterator()
        await arrivals.next()
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        await arrivals.next()
        #expect(received.values == [[], ["Ada"]])
        try await db.write { try $0.create(Person(id: 2, name: "Bob")) }
        await arrivals.next()
        #expect(received.values == [[], ["Ada"], ["Ada", "Bob"]])
        #expect(!token.isCancelled)
        token.cancel()
        #expect(token.isCancelled)
    }

    @MainActor
    static func tokenCancellation(_ db: some Database) async throws {
        let received = Received<Int>()
        let observation = ValueObservation.tracking([Person.self]) { try $0.count(Person.self) }
        let token = observation.start(in: db) { received.append($0) }
        #expect(db.observationHub.subscriberCount == 1)
        // The write's value may be read and on its way to the main actor when the token is cancelled: it is
        // never delivered, and the observer is gone when cancel() returns.
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        token.cancel()
        #expect(db.observationHub.subscriberCount == 0)
        try await db.write { try $0.create(Person(id: 2, name: "Bob")) }
        await token.finished()
        // Ada's value may have reached the main actor while the write was awaited, before the cancel; nothing after.
        #expect(received.values == [0] || received.values == [0, 1], "\(received.values)")
        received.values = [0]

        // Releasing the token cancels it too.
        var released: ObservationToken? = observation.start(in: db) { received.append($0) }
        #expect(received.values == [0, 2])
        #expect(db.observationHub.subscriberCount == 1)
        #expect(released?.isCancelled == false)
        released = nil
        #expect(db.observationHub.subscriberCount == 0)
    }

    /// An actor that keeps what an observation delivers to it.
    actor Counter {
        private(set) var counts: [Int] = []
        private var token: ObservationToken?
        /// One element per count received.
        nonisolated let arrivals: AsyncStream<Void>
        private let signal: AsyncStream<Void>.Continuation

        init() { (arrivals, signal) = AsyncStream.makeStream(of: Void.self) }

        /// Starts the observation here: the first count is in `counts` when this returns.
        func start(_ db: some Database) -> [Int] {
            token = ValueObservation.tracking([Person.self]) { try $0.count(Person.self) }
                .start(in: db, on: self) { counter, count in
                    counter.counts.append(count)
                    counter.signal.yield()
                }
            return counts
        }

        func stop() { token?.cancel() }
    }

    static func actorStart(_ db: some Database) async throws {
        let counter = Counter()
        var arrivals = counter.arrivals.makeAsyncIterator()
        #expect(await counter.start(db) == [0], "the first count is there when start returns")
        await arrivals.next()
        try await db.write { try $0.create(Person(id: 1, name: "Ada")) }
        await arrivals.next()
        #expect(await counter.counts == [0, 1])
        await counter.stop()
        #expect(db.observationHub.subscriberCount == 0)
    }

    @MainActor
    static func failingStart(_ db: some Database) async throws {
        let received = Received<[Stranger]>()
        let token = ValueObservation.records(Stranger.self).start(
            in: db, onError: { received.fail($0) }, onChange: { received.append($0) })
        #expect(received.values.isEmpty)
        #expect(received.errors.count == 1)
        #expect((received.errors.first as? PersistenceError)?.code == .unknownEntity)
        #expect(db.observationHub.subscriberCount == 0, "a start whose first read failed leaves no observer")
        _ = token
    }
}
