public import Foundation
import PersistenceCore
import PersistencePostgres
import Synchronization

/// O2: how long a committed write takes to reach an observer.
///
/// One observation of `Person` — `observe(tracking: [Person.self]) { try $0.count(Person.self) }` — iterated by a
/// task, which notes the time each new count arrives. The writer creates one record per write transaction
/// (`db.write { … }`, the synchronous API), noting the time just before the write begins and just after it returns,
/// then waits for the count that includes the record before the next write: one value per commit, none coalesced.
///
/// On PostgreSQL (`postgres-other-server`) the writer and the observer are two `PostgresDatabase`s on one store, as two
/// app servers are: the value reaches the observer through the store's commit notices (`LISTEN`/`NOTIFY`), with no
/// polling and no write of the observer's.
public enum DeliveryLatencyWorkload {
    public static let workload = "O2"
    /// The implementation name of the PostgreSQL row.
    public static let otherServer = "postgres-other-server"

    /// One run's figures, in seconds, one per commit.
    public struct Run: Sendable {
        /// From just before `write` began to the arrival of the value that includes its record: the commit (an
        /// fsync) and the delivery.
        public var fromStart: [Double] = []
        /// From `write`'s return to that arrival: the delivery alone, less what of it overlapped the end of
        /// `write` (the hub is told of the commit under the writer lock, before `write` returns).
        public var fromReturn: [Double] = []
        /// The write itself, from its start to its return.
        public var writes: [Double] = []
    }

    /// Runs the workload once on `backend` with `commits` commits, in a new store in `directory` (which must be
    /// empty).
    /// - Throws: ``VerificationError`` when a value is missing, late by more than 30 s or wrong, the observation
    ///   failed, or the stored records are wrong; the store's errors.
    public static func run(_ backend: ObservationBackend, commits: Int, directory: URL) throws -> Run {
        let verify = Verifier(workload: workload, implementation: backend.rawValue)
        let generator = PersonGenerator(count: commits)
        return try backend.withStore(in: directory) { db in
            try measure(db, generator: generator, verify: verify)
        }
    }

    /// One database that writes and observes (opened from the `any Database` the backend hands over).
    private static func measure<D: Database>(_ db: D, generator: PersonGenerator, verify: Verifier) throws -> Run {
        try measure(writer: db, observer: db, generator: generator, verify: verify)
    }

    /// Runs the workload once on `server`: the writer and the observer are two databases on one new store.
    public static func runAcrossServers(_ server: PostgresServer, commits: Int) throws -> Run {
        let verify = Verifier(workload: workload, implementation: otherServer)
        var builder = try server.builder()
        builder.model = Model(entities: [Person.self, Note.self])
        try builder.deleteStore()
        let writer = try builder.create()
        let observer = try builder.create()
        defer {
            try? writer.close()
            try? observer.close()
        }
        return try measure(
            writer: writer, observer: observer, generator: PersonGenerator(count: commits), verify: verify)
    }

    private static func measure<D: Database>(
        writer db: D, observer: D, generator: PersonGenerator, verify: Verifier
    ) throws -> Run {
        let arrivals = Arrivals.counting(Person.self, in: observer)
        defer { arrivals.stop() }
        _ = try arrivals.wait(counting: 0, verify)
        var run = Run()
        run.fromStart.reserveCapacity(generator.count)
        run.fromReturn.reserveCapacity(generator.count)
        run.writes.reserveCapacity(generator.count)
        for (index, person) in generator.people.enumerated() {
            let start = ContinuousClock.now
            try db.write { context in try context.create(person) }
            let end = ContinuousClock.now
            let arrived = try arrivals.wait(counting: index + 1, verify)
            run.fromStart.append(start.duration(to: arrived).seconds)
            run.fromReturn.append(end.duration(to: arrived).seconds)
            run.writes.append(start.duration(to: end).seconds)
        }
        let stored = try db.readBack()
        try verify.expect(stored.people, equals: generator.checksum(), "stored records")
        return run
    }
}
