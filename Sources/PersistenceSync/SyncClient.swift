import Foundation
public import PersistenceCore
import Synchronization

/// Syncs an embedded store (SQLite or LMDB, of a `Model.synced()` model) with a server: pushes the
/// local changes its journal holds, then pulls the server's.
///
/// Local writes go on as always — through the database, from any process that opens the store — and each notes the
/// records it changed in the store's journal in its own transaction. A sync pushes them in batches of whole write
/// transactions (the server applies each once, however often a batch is sent again), then pulls every change since
/// the store's cursor, a page at a time, each page applied in one local write that observers see like any other
/// commit and that stores where the pull stands (a pull cut short goes on from there). A pulled change to a record
/// with unpushed local changes is not applied: the local change is pushed, and the record's conflict policy on the
/// server decides.
///
/// ```swift
/// let model = Model(version: 1, entities: [Note.self]).synced()
/// let local = try SQLiteBuilder(databaseName: "Notes", model: model).create()
/// let client = try SyncClient(database: local, model: model, transport: transport)
/// let report = try await client.sync()
/// for rejection in report.rejections { print("not kept as pushed:", rejection.entity, rejection.kind) }
/// ```
public final class SyncClient<Store: Database>: Sendable {
    /// The local store.
    public let database: Store
    let transport: any SyncTransport
    let entities: SyncedEntities
    /// The most local records one push sends (more when one write changed more).
    public let pushBatchSize: Int
    /// The most changes one pulled page holds. Within it, pages are sized by the bytes of their values: the first
    /// holds at most 1,000 changes; each next one as many as take about a quarter of a second to arrive, at the last
    /// page's bytes per change — between 64 KiB and ``pullPageBytes`` of values. A lost connection quarters the size.
    public let pullPageSize: Int
    /// The most bytes of values one pulled page is sized for (and each local write applying it), when
    /// ``pullPageSize`` allows: 4 MiB.
    public static var pullPageBytes: Int { 4 << 20 }
    /// The size the next pulled page is asked for, by how fast pages arrived.
    let pacing = SyncPullPacing(ceiling: pullPageBytes)
    let gate = SyncGate()
    private let subscribed: Mutex<[SyncScope]?>
    let broadcast = LatestValueBroadcast<SyncStatus>(.idle)
    /// The pull under way's progress, or the last one's.
    let progressBroadcast = LatestValueBroadcast<SyncProgress?>(nil)
    let wake = SyncWakeSignal()
    let processLock: SyncProcessLock?
    let rejectionSubscribers = Mutex<[Int: AsyncStream<SyncRejection>.Continuation]>([:])
    private let nextSubscriber = Atomic<Int>(0)

    /// A client that syncs `database`, a store of `model`, through `transport`.
    /// - Parameters:
    ///   - database: The local store; its model must be `model`.
    ///   - model: The store's model, synced (`Model.synced()`).
    ///   - transport: How to reach the server.
    ///   - scopes: The scopes whose records the store holds; `nil` for the whole server store (trusted clients).
    ///   - pushBatchSize: The most records one push sends.
    ///   - pullPageSize: The most changes one pulled page holds (pages are sized to about ``pullPageBytes``).
    /// - Throws: `invalidConfiguration` when the model isn't synced or a size isn't positive;
    ///   `invalidSchema` when the model's entities can't be described.
    public init(
        database: Store, model: Model, transport: some SyncTransport, scopes: [SyncScope]? = nil,
        pushBatchSize: Int = 500, pullPageSize: Int = 10_000
    ) throws {
        guard model.isSynced else {
            throw PersistenceError(
                .invalidConfiguration, "a synced store's model includes its journal: build it with `model.synced()`")
        }
        guard pushBatchSize > 0, pullPageSize > 0 else {
            throw PersistenceError(.invalidConfiguration, "the push batch and pull page sizes must be positive")
        }
        self.database = database
        self.transport = transport
        entities = try SyncedEntities(model: model)
        self.pushBatchSize = pushBatchSize
        self.pullPageSize = pullPageSize
        subscribed = Mutex(scopes)
        processLock = (database as? any FileBackedDatabase)?.storeFileURL.map {
            SyncProcessLock(
                url: $0.deletingLastPathComponent().appendingPathComponent($0.lastPathComponent + ".sync-lock"))
        }
    }

    /// The scopes whose records the store holds; `nil` for the whole server store.
    public var scopes: [SyncScope]? { subscribed.withLock { $0 } }

    /// Changes the scopes the store holds, from the next sync on: the records of an added scope arrive, those only in
    /// a dropped one are removed locally (unless they have changes not yet pushed).
    public func subscribe(to scopes: [SyncScope]?) {
        subscribed.withLock { $0 = scopes }
    }

    /// Pushes every pending local change, then pulls every server change since the last pull.
    ///
    /// Syncs of one client run one at a time (a call waits for the one under way). A sync that fails part-way kept
    /// what it finished: acknowledged batches are no longer pending, applied pages stay applied; the next sync goes on
    /// from there — in this process or another one after a crash, whether or not the server restarted meanwhile. Each
    /// pulled page is applied in one local write that also stores where the pull stands, so the next sync asks for
    /// the page after the last one applied: no page is pulled again, no change skipped.
    /// - Returns: What was pushed and pulled, every pushed change the server did not keep as pushed (rejected or
    ///   merged), and whether the pull resynced.
    /// - Throws: What the transport or the local store throws (`unreachable`,
    ///   `connectionLost`…): the sync stopped there, and running it again is safe.
    ///
    /// One process syncs a file-based store at a time (a lock beside the store's file): while another one does,
    /// this returns at once with ``SyncReport/syncedElsewhere`` set.
    @discardableResult
    public func sync() async throws -> SyncReport {
        try await run(push: true, pull: true)
    }

    /// Pushes every pending local change (without pulling).
    @discardableResult
    public func push() async throws -> SyncReport {
        try await run(push: true, pull: false)
    }

    /// Pulls every server change since the last pull (without pushing).
    @discardableResult
    public func pull() async throws -> SyncReport {
        try await run(push: false, pull: true)
    }

    private func run(push: Bool, pull: Bool) async throws -> SyncReport {
        try await gate.serialized {
            let work = { () async throws -> SyncReport in
                var report = push ? try await self.pushAll() : SyncReport()
                if pull {
                    let pulled = try await self.pullAll()
                    report.pulled = pulled.count
                    report.rejections += pulled.rejections
                    report.resynced = pulled.resynced
                }
                return report
            }
            do {
                let report: SyncReport
                if let processLock = self.processLock {
                    guard let locked = try await processLock.withLock(work) else {
                        self.broadcast.publish(.syncingElsewhere)
                        var elsewhere = SyncReport()
                        elsewhere.syncedElsewhere = true
                        return elsewhere
                    }
                    report = locked
                } else {
                    report = try await work()
                }
                self.broadcast.publish(.idle)
                return report
            } catch let error as PersistenceError {
                self.broadcast.publish(Self.isOffline(error) ? .offline : .failed(error))
                throw error
            } catch {
                self.broadcast.publish(.failed(PersistenceError(.backend, "the sync failed", underlyingError: error)))
                throw error
            }
        }
    }

    /// Whether `error` says the server can't be reached now (trying later may work).
    private static func isOffline(_ error: PersistenceError) -> Bool {
        [.unreachable, .connectionLost, .commitOutcomeUnknown, .busy].contains(error.code)
    }

    /// What the client is doing, as it changes, starting with what it does now; a slow reader gets the newest.
    ///
    /// ```swift
    /// for await status in client.statuses { banner.text = "\(status)" }
    /// ```
    public var statuses: AsyncStream<SyncStatus> { broadcast.stream() }

    /// What the client is doing now.
    public var status: SyncStatus { broadcast.current }

    /// How far each pull that brings changes has come, page by page — changes applied, their bytes, of at most how
    /// many — starting with the latest (`nil` before the first such page). A first sync of a million records reports a
    /// thousand times; a pull that brings nothing reports nothing; a slow reader gets the newest.
    ///
    /// ```swift
    /// for await progress in client.progress {
    ///     if let fraction = progress?.fractionCompleted { bar.value = fraction }
    /// }
    /// ```
    public var progress: AsyncStream<SyncProgress?> { progressBroadcast.stream() }

    /// Syncs until the calling task is cancelled: at once, then whenever a local write leaves changes to push, when
    /// ``syncNow()`` is called, and at least every `interval` (to pull the server's changes). A failed sync is tried
    /// again after a pause that doubles from one second up to `interval` while the server can't be reached.
    ///
    /// ```swift
    /// let syncing = Task { await client.run(every: .seconds(30)) }
    /// // …
    /// syncing.cancel()
    /// ```
    public func run(every interval: Duration = .seconds(30)) async {
        let watcher = Task { [database, wake] in
            for await _ in database.changes(of: SyncRecordState.self) { wake.signal(force: false) }
        }
        defer { watcher.cancel() }
        var pause = Duration.seconds(1)
        var due = true
        while !Task.isCancelled {
            let pending = due ? 0 : ((try? await pendingCount()) ?? 0)
            if due || pending > 0 {
                do {
                    _ = try await sync()
                    pause = .seconds(1)
                } catch {
                    _ = await wake.wait(upTo: min(pause, interval))
                    pause = min(pause * 2, interval)
                    due = true
                    continue
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            let forced = await wake.wait(upTo: interval)
            due = forced || clock.now - start >= interval
        }
    }

    /// Wakes ``run(every:)`` to sync now (after a push notification, say).
    public func syncNow() { wake.signal(force: true) }

    /// The changes the server did not keep as pushed (rejected, or stored merged), and local changes a pulled deletion
    /// removed, as they come back, to every iteration started before they do.
    ///
    /// Each is also in the ``SyncReport`` of the sync that pushed it.
    public var rejections: AsyncStream<SyncRejection> {
        let (stream, continuation) = AsyncStream<SyncRejection>.makeStream()
        let id = nextSubscriber.add(1, ordering: .relaxed).newValue
        rejectionSubscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.rejectionSubscribers.withLock { $0.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many local records have changes not yet pushed and acknowledged.
    public func pendingCount() async throws -> Int {
        try await database.read { context in
            try context.count(SyncRecordState.self, where: Field("isPending") == true)
        }
    }

    // MARK: Client

    /// The store's client record — its id, cursor, scopes, generation and pull under way — made and stored on first
    /// use: one read of the store once it exists.
    func clientState() async throws -> SyncClientState {
        if let client = try await database.read({ try $0.recover(SyncClientState.self, id: 1) }) {
            return client
        }
        return try await database.write(options: .appliesRemoteChanges) { context in
            let client = try SyncClientState.current(in: context)
            try context.upsert(client)
            return client
        }
    }
}

/// Runs syncs of one client one at a time, in the order they were asked for.
actor SyncGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func serialized<R: Sendable>(_ work: @Sendable () async throws -> R) async throws -> R {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiting.isEmpty {
                busy = false
            } else {
                waiting.removeFirst().resume()
            }
        }
        return try await work()
    }
}
