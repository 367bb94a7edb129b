public import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSync
import PersistenceSyncServer
import Synchronization

/// Y4: a first sync over a slow link that drops every connection every ``cutInterval``: it must finish, and re-transfer
/// little more than the same sync uninterrupted.
///
/// Both subjects pull every record of the server's store into a new SQLite store through the HTTP endpoint, behind a
/// ``CuttingProxy`` that carries the server's bytes at ``linkBytesPerSecond`` (a mobile link's pace). `cut` drops every
/// connection every ``cutInterval``; the client's `pull()` then fails (`connectionLost` or `unreachable`) and is called
/// again at once, going on after the last page it applied. The bytes the proxy delivered are compared. Both use the
/// binary wire form; `json` is the uninterrupted sync with JSON pages, to measure what the form costs.
public final class ResumedSyncWorkload {
    public static let workload = "Y4"
    /// How often the link drops.
    public static let cutInterval = Duration.seconds(2)
    /// The link's pace from the server to the client: 20 Mbit/s.
    public static let linkBytesPerSecond = 2_500_000

    public enum Subject: String, CaseIterable, Sendable {
        case uninterrupted = "ours-http-uninterrupted"
        case cut = "ours-http-cut-every-2s"
        case json = "ours-http-json-uninterrupted"

        var wireFormat: SyncWireFormat { self == .json ? .json : .binary }
    }

    /// One run's figures.
    public struct Run: Sendable {
        public var seconds: Double
        /// Bytes the proxy delivered to the client (HTTP headers and bodies).
        public var bytes: Int
        /// Pulls that failed on a dropped connection before one finished.
        public var cuts: Int
    }

    public let records: Int
    private let syncServer: SyncServer
    private let expected: Checksum

    /// Fills the server's store with `records` records (not timed).
    public init(records: Int, server: PostgresServer) throws {
        self.records = records
        let generator = PersonGenerator(count: records)
        expected = generator.checksum()
        syncServer = try SyncStores.server(server, people: generator.people)
    }

    deinit {
        try? syncServer.database.close()
    }

    /// Runs once into a new store in `directory`.
    /// - Throws: ``VerificationError`` when a record is missing or wrong, or the sync never finishes (1,000 cuts).
    public func run(_ subject: Subject, directory: URL) throws -> Run {
        let verify = Verifier(workload: Self.workload, implementation: subject.rawValue)
        let endpoint = try SyncHTTPEndpoint(syncServer)
        defer { endpoint.stop() }
        guard let upstream = endpoint.url.port else {
            throw VerificationError(workload: Self.workload, implementation: subject.rawValue, message: "no port")
        }
        let proxy = try CuttingProxy(upstream: upstream, bytesPerSecond: Self.linkBytesPerSecond)
        defer { proxy.stop() }
        guard let url = URL(string: "http://127.0.0.1:\(proxy.port)/sync") else {
            throw VerificationError(workload: Self.workload, implementation: subject.rawValue, message: "no URL")
        }
        let client = try SyncClientStore.sqlite.client(
            named: "ours", in: directory, transport: SyncHTTPEndpoint.transport(url, wireFormat: subject.wireFormat))
        defer { client.close() }
        let cutter = subject == .cut ? Cutter(proxy: proxy, every: Self.cutInterval) : nil
        defer { cutter?.stop() }
        var cuts = 0
        let seconds = try Stopwatch.time {
            while true {
                do {
                    // A pull cut short throws, its applied pages kept: only the stored records say what arrived.
                    _ = try blockingWait { try await client.pull() }
                    break
                } catch let error as PersistenceError
                    where [.connectionLost, .unreachable].contains(error.code) && cuts < 1_000
                {
                    cuts += 1
                }
            }
        }.seconds
        cutter?.stop()
        try verify.expect(try client.people(), equals: expected, "stored records")
        return Run(seconds: seconds, bytes: proxy.bytesDelivered, cuts: cuts)
    }
}

/// Cuts a proxy's connections every `interval` on a thread of its own until stopped.
private final class Cutter: Sendable {
    private let running = Atomic<Bool>(true)
    private let finished = DispatchSemaphore(value: 0)

    init(proxy: CuttingProxy, every interval: Duration) {
        Thread.detachNewThread { [self] in
            let clock = ContinuousClock()
            var next = clock.now + interval
            while running.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.01)
                if clock.now >= next {
                    proxy.cutAll()
                    next += interval
                }
            }
            finished.signal()
        }
    }

    func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        finished.wait()
    }
}
