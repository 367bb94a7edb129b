public import Foundation
import PersistencePostgres
import PersistenceSync
import PersistenceSyncServer

/// Y2: how long a write on one device takes to reach an observer on another, through the server.
///
/// Two SQLite clients of one server store. For each record: device A creates it (one local write) and pushes, then
/// device B pulls; B's observation (`observe(tracking: [Person.self]) { try $0.count(Person.self) }`) notes when the
/// count that includes the record arrives. Each step starts as soon as the one before it returns — as when a server
/// notification wakes B (`syncNow()`); with polling, add up to the poll interval. Over the direct transport and over
/// HTTP (the Hummingbird handler in this process, async-http-client, a local socket).
///
/// Raw is the floor of a record's trip through the server by hand: postgres-nio inserts it in one transaction on one
/// connection, then reads it back by id on another (no embedded stores, no journal, no observation).
public enum SyncLatencyWorkload {
    public static let workload = "Y2"

    /// The implementations, in the order a round starts with.
    public enum Subject: String, CaseIterable, Sendable {
        case raw = "raw"
        case direct = "ours-direct"
        case http = "ours-http"
    }

    /// Runs once with `commits` records on a new server store, the clients' stores in `directory`.
    /// - Returns: per record, from the start of A's write to B's value (`fromStart`), from the return of A's push to
    ///   B's value (`fromReturn`: the pull and the observation) and A's write and push (`writes`).
    /// - Throws: ``VerificationError`` when a value is missing, late by more than 30 s or wrong, or a store's records
    ///   are wrong; the implementation's errors.
    public static func run(_ subject: Subject, commits: Int, server: PostgresServer, directory: URL) throws
        -> DeliveryLatencyWorkload.Run
    {
        let verify = Verifier(workload: workload, implementation: subject.rawValue)
        let generator = PersonGenerator(count: commits)
        if subject == .raw { return try runRaw(generator, server: server, verify: verify) }
        let syncServer = try SyncStores.server(server, people: [])
        defer { try? syncServer.database.close() }
        let endpoint = subject == .http ? try SyncHTTPEndpoint(syncServer) : nil
        defer { endpoint?.stop() }
        let transport: any SyncTransport = endpoint?.transport ?? syncServer.directTransport
        let writer = try SyncClientStore.sqlite.client(named: "a", in: directory, transport: transport)
        defer { writer.close() }
        let reader = try SyncClientStore.sqlite.client(named: "b", in: directory, transport: transport)
        defer { reader.close() }
        // The first pull of a store is a resync: done before the clock, as a device that has synced before.
        _ = try blockingWait { try await reader.pull() }
        let arrivals = reader.arrivals()
        defer { arrivals.stop() }
        _ = try arrivals.wait(counting: 0, verify)

        var run = DeliveryLatencyWorkload.Run()
        for (index, person) in generator.people.enumerated() {
            let start = ContinuousClock.now
            try writer.create([person], perWrite: 1)
            let pushed = try blockingWait { try await writer.push() }
            let end = ContinuousClock.now
            let pulled = try blockingWait { try await reader.pull() }
            let arrived = try arrivals.wait(counting: index + 1, verify)
            try verify.expect(
                pushed.pushed == 1 && pulled.pulled == 1, "pushed \(pushed.pushed), pulled \(pulled.pulled)")
            run.fromStart.append(start.duration(to: arrived).seconds)
            run.fromReturn.append(end.duration(to: arrived).seconds)
            run.writes.append(start.duration(to: end).seconds)
        }
        let expected = generator.checksum()
        try verify.expect(try reader.people(), equals: expected, "device B's records")
        try verify.expect(try SyncStores.people(on: syncServer), equals: expected, "the server's records")
        return run
    }

    private static func runRaw(_ generator: PersonGenerator, server: PostgresServer, verify: Verifier) throws
        -> DeliveryLatencyWorkload.Run
    {
        let writer = try RawPostgresSubject(server: server, fresh: true)
        let reader = try RawPostgresSubject(server: server, fresh: false)
        var run = DeliveryLatencyWorkload.Run()
        for person in generator.people {
            let start = ContinuousClock.now
            try writer.insert([person])
            let end = ContinuousClock.now
            let read = try reader.lookup(ids: [person.id])
            let arrived = ContinuousClock.now
            try verify.expect(read == [person], "record \(person.id) read back as \(read)")
            run.fromStart.append(start.duration(to: arrived).seconds)
            run.fromReturn.append(end.duration(to: arrived).seconds)
            run.writes.append(start.duration(to: end).seconds)
        }
        return run
    }
}
