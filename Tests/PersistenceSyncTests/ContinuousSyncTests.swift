import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Continuous sync, observation of pulled changes, statuses, and one syncing process per store.
@Suite(.timeLimit(.minutes(5)))
struct ContinuousSyncTests {
    @Test func aWriteOnOneDeviceReachesAnObserverOnAnother() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let (server, directory) = (setup.server, setup.directory)
        let phone = try SyncClient(
            database: SQLiteBuilder.client("phone", in: directory).create(), model: clientModel,
            transport: server.directTransport)
        let laptop = try SyncClient(
            database: LMDBBuilder.client("laptop", in: directory, encrypted: true).create(), model: clientModel,
            transport: server.directTransport)
        // Long intervals: after their first syncs, only the local write (phone) and syncNow (laptop) make syncs happen.
        let laptopSyncing = Task { await laptop.run(every: .seconds(3600)) }
        defer { laptopSyncing.cancel() }
        // The laptop's first sync is over once its cursor is stored; its loop then waits (or is about to).
        var client = laptop.database.observe(SyncClientState.self, query: Query()).makeAsyncIterator()
        while let states = try await client.next(), !states.contains(where: { $0.cursor > 0 }) {}
        var projects = laptop.database.observe(Project.self, query: Query()).makeAsyncIterator()
        #expect(try await projects.next() == [])

        let phoneSyncing = Task { await phone.run(every: .seconds(3600)) }
        defer { phoneSyncing.cancel() }
        try await phone.database.write { try $0.create(Project(id: 1, name: "from the phone")) }
        // Wait until the phone's journal has nothing pending: its sync loop pushed the write.
        var pending = phone.database.observe(SyncRecordState.self, query: Query(where: Field("pending") > Int64(0)))
            .makeAsyncIterator()
        while let records = try await pending.next(), !records.isEmpty {}
        // Nothing is pending on the laptop: only syncNow makes its waiting loop pull.
        laptop.syncNow()
        var seen: [Project]? = []
        while let value = try await projects.next() {
            seen = value
            if !value.isEmpty { break }
        }
        #expect(seen == [Project(id: 1, name: "from the phone")])
    }

    @Test func oneProcessSyncsAStoreAtATimeAndTheOthersWritesWait() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let (store, server, directory) = (setup.store, setup.server, setup.directory)
        let database = try SQLiteBuilder.client("shared", in: directory).create()
        let client = try SyncClient(database: database, model: clientModel, transport: server.directTransport)
        try await database.write { try $0.create(Project(id: 1, name: "written while another syncs")) }

        // Another process holds the store's sync lock.
        let lockPath = try #require(database.fileURL).path + ".sync-lock"
        // Close-on-exec, and unlocked before it is closed: a process another test starts meanwhile gets no lasting copy.
        let other = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(other >= 0)
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0)
        let report = try await client.sync()
        #expect(report.syncedElsewhere && report.pushed == 0)
        if case .syncingElsewhere = client.status {} else { Issue.record("status \(client.status)") }
        #expect(try await client.pendingCount() == 1, "left for the syncing process")

        flock(other, LOCK_UN)
        close(other)
        let after = try await client.sync()
        #expect(!after.syncedElsewhere && after.pushed == 1)
        if case .idle = client.status {} else { Issue.record("status \(client.status)") }
        #expect(try await Contents.of(store).projects.count == 1)

        // The lock file belongs to the store: deleting the store removes it.
        try database.close()
        #expect(try SQLiteDatabase.deleteStore(named: "shared", in: directory))
        #expect(!FileManager.default.fileExists(atPath: lockPath))
    }

    #if os(Linux)
        /// A process started while a sync holds the lock (the app launching a helper, a test spawning a tool) gets a
        /// copy of the lock's descriptor until it runs its program. The lock ends with the sync all the same: the
        /// next sync of this process isn't told that another one holds it.
        @Test func aDescriptorCopiedDuringASyncDoesNotKeepItsLock() async throws {
            let setup = try await ServerAndFolder.make()
            defer { setup.remove() }
            let (server, directory) = (setup.server, setup.directory)
            let database = try SQLiteBuilder.client("copied", in: directory).create()
            let lockPath = try #require(database.fileURL).path + ".sync-lock"
            let copies = Mutex<[Int32]>([])
            defer {
                for copy in copies.withLock({ $0 }) { close(copy) }
            }
            // What a fork does to the descriptor table, done by the transport while the sync holds the lock.
            let transport = ObservingTransport(server.directTransport) {
                guard let descriptor = Self.openDescriptor(of: lockPath) else { return }
                let copy = dup(descriptor)
                if copy >= 0 { copies.withLock { $0.append(copy) } }
            }
            let client = try SyncClient(database: database, model: clientModel, transport: transport)
            try await database.write { try $0.create(Project(id: 1, name: "first")) }
            #expect(try await !client.sync().syncedElsewhere)
            #expect(copies.withLock { !$0.isEmpty }, "the lock file's descriptor wasn't found")
            try await database.write { try $0.create(Project(id: 2, name: "second")) }
            let second = try await client.sync()
            #expect(!second.syncedElsewhere && second.pushed == 1)
        }

        /// This process's descriptor open on `path`, from `/proc/self/fd`.
        private static func openDescriptor(of path: String) -> Int32? {
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return entries.lazy.compactMap { entry -> Int32? in
                guard let descriptor = Int32(entry),
                    let linked = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + entry),
                    linked == target
                else { return nil }
                return descriptor
            }.first
        }
    #endif

    @Test func statusesSayOfflineWhenTheServerCantBeReached() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = try SyncClient(
            database: SQLiteBuilder.client("offline", in: directory).create(), model: clientModel,
            transport: httpTransport(URL(string: "http://127.0.0.1:9/sync")!, token: "admin"))
        var statuses = client.statuses.makeAsyncIterator()
        if case .idle? = await statuses.next() {} else { Issue.record("the first status isn't idle") }
        _ = try? await client.sync()
        if case .offline = client.status {} else { Issue.record("status \(client.status)") }
    }
}

/// A transport that runs `observe` before each pull it passes on.
struct ObservingTransport: SyncTransport {
    let base: any SyncTransport
    let observe: @Sendable () -> Void

    init(_ base: any SyncTransport, observe: @escaping @Sendable () -> Void) {
        self.base = base
        self.observe = observe
    }

    func push(_ push: SyncPush) async throws -> SyncPushResult { try await base.push(push) }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        observe()
        return try await base.pull(request)
    }
}
