import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import PersistenceTestProcesses
import PersistenceTesting
import Synchronization
import Testing

/// A pull cut short — the connection lost, the client's process gone, the server restarted — goes on after the last
/// page it applied: first syncs, incremental pulls and resyncs alike, no page pulled twice and no change skipped.
@Suite(.timeLimit(.minutes(5)))
struct SyncResumeTests {
    static let records = 1000
    static let pageSize = 50
    /// Pages applied before the connection is lost: 600 records.
    static let cutAfter = 12

    static func projects(from first: Int64 = 1) -> [Project] {
        (first..<first + Int64(records)).map { Project(id: $0, name: "p\($0)") }
    }

    static func client(_ kind: ClientKind, in directory: URL, transport: some SyncTransport) throws
        -> any TestSyncClient
    {
        switch kind {
        case .sqlite:
            try SyncClient(
                database: SQLiteBuilder.client("client", in: directory).create(), model: clientModel,
                transport: transport, pullPageSize: pageSize)
        case .lmdb, .encryptedLMDB:
            try SyncClient(
                database: LMDBBuilder.client("client", in: directory, encrypted: kind == .encryptedLMDB).create(),
                model: clientModel, transport: transport, pullPageSize: pageSize)
        }
    }

    @Test(arguments: ClientKind.allCases)
    func aFirstSyncCutShortGoesOnFromItsLastAppliedPage(_ kind: ClientKind) async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        try await setup.store.write { try $0.create(Self.projects()) }
        let transport = CuttingTransport(server: setup.server)
        let client = try Self.client(kind, in: setup.directory, transport: transport)

        transport.cut(afterPages: Self.cutAfter)
        await expectConnectionLost { try await client.sync() }
        #expect(try await client.contents().projects.count == Self.cutAfter * Self.pageSize, "applied pages stay")

        let report = try await client.sync()
        let counts = transport.counts()
        #expect(counts.snapshot == Self.records, "every record of the snapshot came once: none again, none skipped")
        #expect(report.pulled >= Self.records - Self.cutAfter * Self.pageSize)
        #expect(!report.resynced, "a first sync isn't a resync")
        #expect(try await client.contents() == Contents.of(setup.store))
    }

    @Test(arguments: ClientKind.allCases)
    func anIncrementalPullCutShortGoesOnFromItsLastAppliedPage(_ kind: ClientKind) async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let transport = CuttingTransport(server: setup.server)
        let client = try Self.client(kind, in: setup.directory, transport: transport)
        _ = try await client.sync()
        try await setup.store.write { try $0.create(Self.projects()) }

        transport.cut(afterPages: Self.cutAfter)
        await expectConnectionLost { try await client.sync() }
        #expect(try await client.contents().projects.count == Self.cutAfter * Self.pageSize)

        let report = try await client.sync()
        #expect(report.pulled == Self.records - Self.cutAfter * Self.pageSize, "only the pages not applied yet")
        #expect(transport.counts().changes == Self.records)
        #expect(try await client.contents() == Contents.of(setup.store))
    }

    @Test func aResyncCutShortGoesOnWithItsGenerationAndIsReported() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let (store, server) = (setup.store, setup.server)
        let transport = CuttingTransport(server: server)
        let client = try Self.client(.sqlite, in: setup.directory, transport: transport)
        try await store.write { try $0.create(Project(id: 5000, name: "deleted while the client is away")) }
        #expect(try await client.sync().resynced == false)
        try await store.write { context in
            _ = try context.delete(Project.self, id: 5000)
            try context.create(Self.projects())
        }
        // The deletion is forgotten before the client pulls it: the client must resync.
        #expect(try await server.purgeTombstones(olderThan: .zero) == 1)

        let before = transport.counts().snapshot
        transport.cut(afterPages: Self.cutAfter)
        await expectConnectionLost { try await client.sync() }
        let report = try await client.sync()
        #expect(report.resynced)
        #expect(transport.counts().snapshot - before == Self.records, "the resync's pages came once each")
        // The sweep after the last page removes the record the server deleted, and only it: the records of the pages
        // applied before the cut carry the resync's generation.
        #expect(try await client.contents() == Contents.of(store))
        #expect(try await client.sync().resynced == false)
    }

    /// A commit of a transaction that began (and took its id) before the records were written, but ended only while
    /// the pull was under way: its change sits before pages already applied, and only the cursor kept from the first
    /// page (the oldest transaction still running then) brings it — across the cut too.
    @Test func aCommitEndingWhileAPullIsCutShortIsNotSkipped() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let store = setup.store
        let transport = CuttingTransport(server: setup.server)
        let client = try Self.client(.sqlite, in: setup.directory, transport: transport)
        _ = try await client.sync()

        let started = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        // Should the test fail before the transaction goes on, it still ends.
        defer { proceed.signal() }
        let late = Task {
            try await offPool {
                try store.write { context in
                    // The transaction takes its id now, before the other records' transaction.
                    _ = try context.internalRows("SELECT pg_catalog.pg_current_xact_id()")
                    started.signal()
                    proceed.wait()
                    try context.create(Project(id: 9999, name: "late"))
                }
            }
        }
        try await offPool { started.wait() }
        try await store.write { try $0.create(Self.projects()) }
        transport.betweenPages { pages in
            guard pages == 3 else { return }
            proceed.signal()
            try await late.value
        }
        transport.cut(afterPages: Self.cutAfter)
        await expectConnectionLost { try await client.sync() }
        _ = try await client.sync()
        _ = try await client.sync()
        let held = try await client.contents()
        #expect(held.projects.contains { $0.id == 9999 }, "the late commit was skipped")
        #expect(held == (try await Contents.of(store)))
    }

    /// The client's process ends mid-pull (its store reopened by a new process's client) and the server restarts
    /// (every connection dropped, a new sync server): the next sync pulls only the pages not applied.
    @Test func aPullResumesInANewClientAfterTheServerRestarted() async throws {
        let own = try OwnServer()
        defer { own.stop() }
        var builder = try PostgresBuilder(url: own.url, model: serverModel)
        builder.schema = "sync_resume"
        let opening = builder
        let store = try await offPool { try opening.create() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await store.write { try $0.create(Self.projects()) }
        let transport = CuttingTransport(server: server)
        do {
            let client = try Self.client(.sqlite, in: directory, transport: transport)
            transport.cut(afterPages: Self.cutAfter)
            await expectConnectionLost { try await client.sync() }
        }
        let restart = try own.restart()
        restart.waitUntilExit()
        #expect(restart.terminationStatus == 0)

        let reopened = try await offPool { try opening.create() }
        let restarted = try await offPool { try SyncServer(database: reopened, model: serverModel) }
        let counting = CuttingTransport(server: restarted)
        let client = try Self.client(.sqlite, in: directory, transport: counting)
        let report = try await client.sync()
        // The server's own: no other transaction runs on it, so the pull after the snapshot brings nothing.
        #expect(report.pulled == Self.records - Self.cutAfter * Self.pageSize)
        #expect(counting.counts().snapshot == Self.records - Self.cutAfter * Self.pageSize)
        #expect(try await client.contents() == Contents.of(reopened))
    }

    private func expectConnectionLost(_ body: () async throws -> SyncReport) async {
        do {
            _ = try await body()
            Issue.record("the sync wasn't cut")
        } catch let error as PersistenceError {
            #expect(error.code == .connectionLost)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

/// The direct transport, except that it loses the connection once a number of pages were pulled, and counts the
/// changes it delivered.
final class CuttingTransport: SyncTransport, Sendable {
    struct Counts {
        /// Changes delivered by snapshot pulls (a first sync's, a resync's).
        var snapshot = 0
        /// Changes delivered by pulls of the changes since a cursor.
        var changes = 0
        /// Pages delivered.
        var pages = 0
    }

    private struct State {
        var counts = Counts()
        var pagesLeft: Int?
        var betweenPages: (@Sendable (Int) async throws -> Void)?
    }

    private let state = Mutex(State())
    private let server: SyncServer

    init(server: SyncServer) { self.server = server }

    /// The next pull after `pages` more pages throws `connectionLost` (once).
    func cut(afterPages pages: Int) { state.withLock { $0.pagesLeft = pages } }

    /// Runs `body` with the number of pages delivered so far before each pull after the first.
    func betweenPages(_ body: @escaping @Sendable (Int) async throws -> Void) {
        state.withLock { $0.betweenPages = body }
    }

    func counts() -> Counts { state.withLock { $0.counts } }

    func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        let (cut, hook, delivered) = state.withLock { state in
            defer { if state.pagesLeft == 0 { state.pagesLeft = nil } }
            return (state.pagesLeft == 0, state.betweenPages, state.counts.pages)
        }
        if cut { throw PersistenceError(.connectionLost, "the connection was lost") }
        if delivered > 0, let hook { try await hook(delivered) }
        let page = try await server.pull(request)
        state.withLock { state in
            state.counts.pages += 1
            if request.isSnapshot {
                state.counts.snapshot += page.changes.count
            } else {
                state.counts.changes += page.changes.count
            }
            state.pagesLeft = state.pagesLeft.map { $0 - 1 }
        }
        return page
    }
}
