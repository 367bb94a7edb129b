public import Foundation
import PersistencePostgres
import PersistenceSync
import PersistenceSyncServer
import PostgresNIO

/// Y3: ten devices pushing at once — each a SQLite client with its share of the records created offline (writes of
/// 10 records), all pushing at the same moment to one server (its store's pool: 10 connections); timed from the start
/// of the first push to the end of the last. Each push sends batches of up to 500 records, each batch one transaction
/// on the server, set-based: the client's row locked, an advisory lock per record, the stored records read (locked)
/// and their versions in a statement each, the conflicts decided in memory, one multi-row write, the change log
/// written by the table's trigger. `Person` has no relationships, so batches run `READ COMMITTED` at once.
///
/// `ours-direct-2-servers` splits the devices between two sync servers on the one store, each its own database (half
/// the connections): two server processes' worth, in one process. The `referring` subjects push the same fields as
/// records that refer to one of ten crews (``CrewPushes``): each reference locks its crew until the batch commits.
///
/// Raw is the floor of the same writes by hand: ten postgres-nio connections, each inserting its share in
/// transactions of 500 rows (a prepared `INSERT` per row), all at once.
public enum PushThroughputWorkload {
    public static let workload = "Y3"
    /// How many devices push at once.
    public static let clients = 10
    /// Records per local write transaction on each device.
    static let recordsPerWrite = 10
    /// Records per transaction of raw's writers: ours' push batch.
    static let recordsPerBatch = 500

    /// The implementations, in the order a round starts with.
    public enum Subject: String, CaseIterable, Sendable {
        case raw = "raw"
        case direct = "ours-direct"
        case http = "ours-http"
        /// Two sync servers on the store, each its own database with half the connections, the devices split
        /// between them: what a second server process adds.
        case twoServers = "ours-direct-2-servers"
        /// The same records, each referring to one of ten crews: each device's to a crew of its own
        /// (``CrewPushes``).
        case referringOwnParent = "ours-direct-referring-own-crew"
        /// Each batch referring to all ten crews: the pushes wait for each other's locks on them.
        case referringSharedParents = "ours-direct-referring-shared-crews"
    }

    /// Runs once: `records` records spread over the devices (device `c` holds the ids `id % 10 == c`), stores in
    /// `directory`; returns the seconds of the pushes alone.
    /// - Throws: ``VerificationError`` when a push was refused in part or the server's records are wrong; the
    ///   implementation's errors.
    public static func run(_ subject: Subject, records: Int, server: PostgresServer, directory: URL) throws -> Double {
        let verify = Verifier(workload: workload, implementation: subject.rawValue)
        let generator = PersonGenerator(count: records)
        let shares = (0..<clients).map { client in
            Array(generator.people.lazy.filter { Int($0.id % Int64(clients)) == client })
        }
        let seconds: Double
        let stored: Checksum
        switch subject {
        case .raw:
            let reader = try RawPostgresSubject(server: server, fresh: true)
            let connections = try blockingWait {
                try await withThrowingTaskGroup(of: PostgresConnection.self) { group in
                    for _ in shares { group.addTask { try await server.connect() } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            defer { for connection in connections { try? connection.close().wait() } }
            seconds = try measure(subject) {
                try blockingWait {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (connection, share) in zip(connections, shares) {
                            group.addTask {
                                for batch in share.chunks(of: recordsPerBatch) {
                                    try await RawPostgresSubject.insert(batch, on: connection)
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }.seconds
            stored = Checksum(try reader.fetchAll())
        case .referringOwnParent, .referringSharedParents:
            return try CrewPushes.run(
                shares, expected: generator.checksum(), sharedParents: subject == .referringSharedParents,
                server: server, directory: directory, verify: verify, measure: { try measure(subject, $0) })
        case .direct, .http, .twoServers:
            let servers = subject == .twoServers ? 2 : 1
            let syncServer = try SyncStores.server(server, people: [], poolSize: clients / servers)
            defer { try? syncServer.database.close() }
            let second = subject == .twoServers ? try SyncStores.secondServer(server, poolSize: clients / 2) : nil
            defer { try? second?.database.close() }
            let endpoint = subject == .http ? try SyncHTTPEndpoint(syncServer) : nil
            defer { endpoint?.stop() }
            let transports: [any SyncTransport] =
                [endpoint?.transport ?? syncServer.directTransport] + (second.map { [$0.directTransport] } ?? [])
            var devices: [any SyncBenchClient] = []
            defer { for device in devices { device.close() } }
            for (client, share) in shares.enumerated() {
                let transport = transports[client % transports.count]
                let device = try SyncClientStore.sqlite.client(
                    named: "device-\(client)", in: directory, transport: transport)
                devices.append(device)
                try device.create(share, perWrite: recordsPerWrite)
            }
            let reports = try measure(subject) { [devices] in
                try blockingWait {
                    try await withThrowingTaskGroup(of: SyncReport.self) { group in
                        for device in devices { group.addTask { try await device.push() } }
                        return try await group.reduce(into: [SyncReport]()) { $0.append($1) }
                    }
                }
            }
            seconds = reports.seconds
            let pushed = reports.result.reduce(0) { $0 + $1.pushed }
            let rejected = reports.result.reduce(0) { $0 + $1.rejections.count }
            try verify.expect(pushed == records && rejected == 0, "pushed \(pushed), \(rejected) rejected")
            stored = try SyncStores.people(on: syncServer)
        }
        try verify.expect(stored, equals: generator.checksum(), "the server's records")
        return seconds
    }

    private static func measure<R>(_ subject: Subject, _ body: () throws -> R) throws -> (result: R, seconds: Double) {
        try InstructionLabel.measuring(workload, subject.rawValue) { try Stopwatch.time(body) }
    }
}
