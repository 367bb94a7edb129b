public import Foundation
import PersistencePostgres
import PersistenceSync
import PersistenceSyncServer

/// Y1: the first sync of a new device — every record of a server store of `Person` into an empty embedded store.
///
/// Ours: `SyncClient.pull()` through the direct transport (pages of about 4 MiB of values, the first of 1,000
/// changes, each applied set-based in one local write while the next is read, journaled as synced, the reference
/// check after the last page). Raw: what a hand-written initial load does —
/// postgres-nio reads the whole table (`SELECT` in one `REPEATABLE READ` transaction, rows streamed and decoded into
/// `Person`s; postgres-nio has no `COPY … TO STDOUT`, and its binary row format is what `COPY` would send) from a
/// table of the same shape in schema ``PostgresServer/rawSchema``, then inserts them into the embedded store in one
/// transaction with one prepared statement (SQLite) or one write transaction of `mdb_put`s (LMDB).
public final class InitialSyncWorkload {
    public static let workload = "Y1"

    /// The implementations, in the order a round starts with.
    public enum Subject: String, CaseIterable, Sendable {
        case rawSQLite = "raw-sqlite"
        case oursSQLite = "ours-sqlite"
        case rawLMDB = "raw-lmdb"
        case oursLMDB = "ours-lmdb"
        case oursLMDBEncrypted = "ours-lmdb-encrypted"

        /// The raw row a subject's ratio is taken against.
        public var raw: Subject {
            switch self {
            case .rawSQLite, .oursSQLite: .rawSQLite
            case .rawLMDB, .oursLMDB, .oursLMDBEncrypted: .rawLMDB
            }
        }
    }

    public let records: Int
    private let server: PostgresServer
    private let syncServer: SyncServer
    private let expected: Checksum

    /// Fills the server's store (ours' and raw's table) with `records` records (not timed).
    public init(records: Int, server: PostgresServer) throws {
        self.records = records
        self.server = server
        let generator = PersonGenerator(count: records)
        expected = generator.checksum()
        syncServer = try SyncStores.server(server, people: generator.people)
        // Raw's table holds the same rows: copied on the server (the two tables have one shape, checked before the
        // P and Y workloads run).
        try RawPostgresSubject(server: server, fresh: true).copyRows(from: "\"\(SyncStores.schema)\".\"Person\"")
    }

    deinit {
        try? syncServer.database.close()
    }

    /// Runs once into a new store in `directory` (which must be empty); returns the seconds of the sync alone
    /// (stores opened, the raw baseline connected, before the clock starts).
    /// - Throws: ``VerificationError`` when a record is missing or wrong; the implementation's errors.
    public func run(_ subject: Subject, directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: subject.rawValue)
        /// Times `body` for the instruction counts too.
        func measure(_ body: () throws -> Void) throws -> Double {
            try InstructionLabel.measuring(Self.workload, subject.rawValue) { try Stopwatch.time(body).seconds }
        }
        switch subject {
        case .rawSQLite, .rawLMDB:
            let postgres = try RawPostgresSubject(server: server, fresh: false)
            let local: (insert: ([Person]) throws -> Void, readBack: () throws -> [Person])
            if subject == .rawSQLite {
                let sqlite = try RawSQLiteSubject(directory: directory)
                local = (sqlite.insert, sqlite.fetchAll)
            } else {
                let lmdb = try RawLMDBPlainSubject(directory: directory)
                local = (lmdb.put, lmdb.scan)
            }
            let seconds = try measure { try local.insert(postgres.fetchAll()) }
            try verify.expect(Checksum(try local.readBack()), equals: expected, "stored records")
            return seconds
        case .oursSQLite, .oursLMDB, .oursLMDBEncrypted:
            let store: SyncClientStore =
                switch subject {
                case .oursSQLite: .sqlite
                case .oursLMDB: .lmdb
                default: .lmdbEncrypted
                }
            let client = try store.client(named: "ours", in: directory, transport: syncServer.directTransport)
            defer { client.close() }
            var report = SyncReport()
            let seconds = try measure {
                report = try blockingWait { try await client.pull() }
            }
            try verify.expect(report.pulled == records, "pulled \(report.pulled) changes, expected \(records)")
            try verify.expect(report.rejections.isEmpty, "\(report.rejections.count) rejections")
            try verify.expect(try client.people(), equals: expected, "stored records")
            return seconds
        }
    }
}
