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
/// commit. A pulled change to a record with unpushed local changes is not applied: the local change is pushed, and
/// the record's conflict policy on the server decides.
///
/// ```swift
/// let model = Model(version: 1, entities: [Note.self]).synced()
/// let local = try SQLiteBuilder(databaseName: "Notes", model: model).create()
/// let client = try SyncClient(database: local, model: model, transport: transport)
/// let report = try await client.sync()
/// for rejection in report.rejections { print("not kept:", rejection.entity, rejection.reason) }
/// ```
public final class SyncClient<Store: Database>: Sendable {
    /// The local store.
    public let database: Store
    private let transport: any SyncTransport
    private let entities: SyncedEntities
    /// The most local records one push sends (more when one write changed more).
    public let pushBatchSize: Int
    /// The most changes one pulled page holds.
    public let pullPageSize: Int
    private let gate = SyncGate()
    private let subscribed: Mutex<[SyncScope]?>
    private let broadcast = SyncStatusBroadcast()
    private let wake = SyncWakeSignal()
    private let processLock: SyncProcessLock?
    private let rejectionSubscribers = Mutex<[Int: AsyncStream<SyncRejection>.Continuation]>([:])
    private let nextSubscriber = Atomic<Int>(0)

    /// A client that syncs `database`, a store of `model`, through `transport`.
    /// - Parameters:
    ///   - database: The local store; its model must be `model`.
    ///   - model: The store's model, synced (`Model.synced()`).
    ///   - transport: How to reach the server.
    ///   - scopes: The scopes whose records the store holds; `nil` for the whole server store (trusted clients).
    ///   - pushBatchSize: The most records one push sends.
    ///   - pullPageSize: The most changes one pulled page holds.
    /// - Throws: `invalidConfiguration` when the model isn't synced or a size isn't positive;
    ///   `invalidSchema` when the model's entities can't be described.
    public init(
        database: Store, model: Model, transport: some SyncTransport, scopes: [SyncScope]? = nil,
        pushBatchSize: Int = 500, pullPageSize: Int = 1000
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
    /// from there.
    /// - Returns: What was pushed and pulled, and every pushed change the server did not keep.
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
            for await _ in database.changes(of: SyncRecordState.self) { wake.signal() }
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
                    await wake.wait(upTo: min(pause, interval))
                    pause = min(pause * 2, interval)
                    due = true
                    continue
                }
            }
            let clock = ContinuousClock()
            let start = clock.now
            await wake.wait(upTo: interval)
            due = clock.now - start >= interval
        }
    }

    /// Wakes ``run(every:)`` to sync now (after a push notification, say).
    public func syncNow() { wake.signal() }

    /// The changes the server did not keep as pushed, as they come back, to every iteration started before they do.
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
            try context.count(SyncRecordState.self, where: Field("pending") > Int64(0))
        }
    }

    // MARK: Push

    private func pushAll() async throws -> SyncReport {
        var report = SyncReport()
        let clientID = try await self.clientID()
        while true {
            let entries = try await database.read { [entities, pushBatchSize] context in
                try Self.pendingBatch(in: context, entities: entities, limit: pushBatchSize)
            }
            guard !entries.isEmpty else { return report }
            broadcast.publish(.pushing(entries.count))
            let push = SyncPush(
                clientID: clientID, modelVersion: entities.model.version, entries: entries, scopes: scopes)
            let result = try await transport.push(push)
            guard result.outcomes.count == entries.count,
                zip(result.outcomes, entries).allSatisfy({
                    $0.sequence == $1.sequence && $0.entity == $1.change.entity && $0.key == $1.change.key
                })
            else {
                throw PersistenceError(.backend, "the sync server answered a push with outcomes of other changes")
            }
            let rejections = try await database.write { [entities] context in
                try SyncJournal.markRemoteApply()
                return try Self.acknowledge(result, in: context, entities: entities)
            }
            report.pushed += entries.count
            report.rejections += rejections
            publish(rejections)
        }
    }

    /// The oldest pending records, whole outbox sequences of them, with their local state — and the sequences of any
    /// pending record they refer to, so that a record never goes before the one it refers to (a parent changed again
    /// after its child was created has a later sequence than the child).
    private static func pendingBatch(
        in context: some DatabaseContext, entities: SyncedEntities, limit: Int
    ) throws -> [SyncPush.Entry] {
        var states = try context.recover(
            SyncRecordState.self,
            query: Query(where: Field("pending") > Int64(0), sortedBy: [.ascending("pending")], limit: limit + 1))
        guard var through = states.last?.pending else { return [] }
        if states.count > limit {
            // Whole sequences only: drop the last one's records unless it is the only one.
            let earlier = states.filter { $0.pending < through }
            if let last = earlier.last { through = last.pending }
        }
        while true {
            states = try context.recover(
                SyncRecordState.self,
                query: Query(
                    where: Field("pending") > Int64(0) && Field("pending") <= through,
                    sortedBy: [.ascending("pending")]))
            var entries: [SyncPush.Entry] = []
            var needed = through
            for state in states {
                let entry = try entities.entry(state.entity)
                let key = try state.keyValue()
                let record = try context.syncedRecord(entry, key: key)
                for (foreignKey, target) in entry.references {
                    guard let parent = record?.values[foreignKey], !parent.isNull else { continue }
                    let parentState = try context.recover(
                        SyncRecordState.self, id: SyncRecordState.id(entity: target, key: parent))
                    if let parentState, parentState.pending > needed { needed = parentState.pending }
                }
                let change =
                    record.map { SyncChange(record: $0, version: state.version) }
                    ?? SyncChange(entity: state.entity, key: key, values: nil, version: state.version)
                entries.append(SyncPush.Entry(sequence: state.pending, change: change))
            }
            guard needed > through else { return entries }
            through = needed
        }
    }

    /// Applies a push's outcomes: acknowledged records are no longer pending; a merged or rejected one takes the
    /// server's state unless it changed locally again since.
    private static func acknowledge(
        _ result: SyncPushResult, in context: some DatabaseContext, entities: SyncedEntities
    ) throws -> [SyncRejection] {
        var rejections: [SyncRejection] = []
        let ordered = entities.applyOrder(result.outcomes, entity: \.entity) {
            $0.kind != .applied && $0.kind != .alreadyApplied && $0.current.isDeletion
        }
        for outcome in ordered {
            let id = SyncRecordState.id(entity: outcome.entity, key: outcome.key)
            var state =
                try context.recover(SyncRecordState.self, id: id)
                ?? SyncRecordState(entity: outcome.entity, key: outcome.key)
            let unchangedSince = state.pending <= outcome.sequence
            switch outcome.kind {
            case .applied:
                state.version = outcome.current.version
            case .merged, .rejected:
                if unchangedSince {
                    let entry = try entities.entry(outcome.entity)
                    try context.storeSynced(entry, key: outcome.key, record: outcome.current.record(of: entry.layout))
                    state.version = outcome.current.version
                }
                if outcome.kind == .rejected {
                    rejections.append(
                        SyncRejection(
                            entity: outcome.entity, key: outcome.key,
                            reason: outcome.reason ?? "the server's conflict policy kept its own state",
                            serverState: outcome.current, sequence: outcome.sequence))
                }
            case .alreadyApplied:
                break
            }
            if unchangedSince { state.pending = 0 }
            try context.upsert(state)
        }
        return rejections + (try Self.droppedByCascade(in: context, entities: entities))
    }

    /// The records with unpushed local changes that this transaction's pulled deletions removed through a cascade
    /// delete rule (the record they belong to was deleted on the server): reported as rejections, no longer pending.
    private static func droppedByCascade(in context: some DatabaseContext, entities: SyncedEntities) throws
        -> [SyncRejection]
    {
        var dropped: [SyncRejection] = []
        for (entity, keys) in SyncJournal.currentChanges() {
            guard let entry = try? entities.entry(entity) else { continue }
            for key in keys {
                let id = SyncRecordState.id(entity: entity, key: key)
                guard var state = try context.recover(SyncRecordState.self, id: id), state.pending > 0,
                    try context.syncedRecord(entry, key: key) == nil
                else { continue }
                dropped.append(
                    SyncRejection(
                        entity: entity, key: key,
                        reason: "deleted on the server with a record it belongs to (a cascade delete rule)",
                        serverState: SyncChange(entity: entity, key: key, values: nil, version: state.version),
                        sequence: state.pending))
                state.pending = 0
                try context.upsert(state)
            }
        }
        return dropped
    }

    private func publish(_ rejections: [SyncRejection]) {
        guard !rejections.isEmpty else { return }
        let subscribers = rejectionSubscribers.withLock { Array($0.values) }
        for subscriber in subscribers {
            for rejection in rejections { subscriber.yield(rejection) }
        }
    }

    // MARK: Pull

    /// What pulls did: how many changes came, and the local changes they made void.
    private struct Pulled: Sendable {
        var count = 0
        var rejections: [SyncRejection] = []

        static func += (lhs: inout Pulled, rhs: Pulled) {
            lhs.count += rhs.count
            lhs.rejections += rhs.rejections
        }
    }

    private func pullAll() async throws -> Pulled {
        let clientID = try await self.clientID()
        let client = try await database.read { try SyncClientState.current(in: $0) }
        let scopes = self.scopes
        let wanted = SyncScopes.text(of: scopes)
        var pulled = Pulled()
        if client.syncedScopes == nil || client.cursor == 0 {
            pulled += try await resync(clientID: clientID, scopes: scopes)
        } else if client.syncedScopes != wanted {
            let added = SyncScopes.added(to: client.syncedScopes, in: scopes)
            if let added {
                // Only new scopes: their records now, then every change since the cursor for all of them.
                pulled += try await pages(
                    clientID: clientID, cursor: 0, scopes: added, snapshot: true, generation: nil,
                    finish: { context, _, _ in
                        var client = try SyncClientState.current(in: context)
                        client.syncedScopes = wanted
                        try context.upsert(client)
                    })
            } else {
                pulled += try await resync(clientID: clientID, scopes: scopes)
            }
        }
        do {
            pulled += try await changes(clientID: clientID, scopes: scopes)
        } catch let error as PersistenceError where error.code == .resyncRequired {
            pulled += try await resync(clientID: clientID, scopes: scopes)
            pulled += try await changes(clientID: clientID, scopes: scopes)
        }
        return pulled
    }

    /// Pulls every change since the store's cursor, then moves the cursor.
    private func changes(clientID: String, scopes: [SyncScope]?) async throws -> Pulled {
        let cursor = try await database.read { try SyncClientState.current(in: $0).cursor }
        return try await pages(
            clientID: clientID, cursor: cursor, scopes: scopes, snapshot: false, generation: nil,
            finish: { context, horizon, epoch in
                var client = try SyncClientState.current(in: context)
                client.cursor = max(client.cursor, horizon)
                client.purgeEpoch = max(client.purgeEpoch, epoch)
                try context.upsert(client)
            })
    }

    /// Pulls the scopes' records whole, removes every clean local record it didn't get, and restarts the cursor from
    /// the snapshot: the first sync, a dropped scope, a client offline for longer than the server keeps deletions.
    private func resync(clientID: String, scopes: [SyncScope]?) async throws -> Pulled {
        // Taken before the first page: a resync that fails part-way has stamped records with its generation, and the
        // next one must not count them as brought by it.
        let generation = try await database.write { context in
            try SyncJournal.markRemoteApply()
            var client = try SyncClientState.current(in: context)
            client.generation += 1
            try context.upsert(client)
            return client.generation
        }
        let wanted = SyncScopes.text(of: scopes)
        return try await pages(
            clientID: clientID, cursor: 0, scopes: scopes, snapshot: true, generation: generation,
            finish: { [entities] context, horizon, epoch in
                try Self.sweep(in: context, entities: entities, keeping: generation)
                var client = try SyncClientState.current(in: context)
                client.cursor = horizon
                client.purgeEpoch = epoch
                client.syncedScopes = wanted
                try context.upsert(client)
            })
    }

    /// Pulls pages until the last, each applied in one local write; `finish` runs in the last page's write with the
    /// lowest cursor the pages gave (every change after it is in a later pull).
    private func pages(
        clientID: String, cursor: Int64, scopes: [SyncScope]?, snapshot: Bool, generation: Int64?,
        finish: @escaping @Sendable (Store.Context, _ cursor: Int64, _ purgeEpoch: Int64) throws -> Void
    ) async throws -> Pulled {
        let purgeEpoch = try await database.read { try SyncClientState.current(in: $0).purgeEpoch }
        var after: SyncPosition?
        var lowest = Int64.max
        var firstEpoch: Int64?
        var pulled = Pulled()
        // References to records a later page may bring.
        var dangling: [DanglingReference] = []
        repeat {
            let request = SyncPullRequest(
                clientID: clientID, modelVersion: entities.model.version, cursor: cursor, after: after,
                limit: pullPageSize, scopes: scopes, isSnapshot: snapshot, purgeEpoch: purgeEpoch)
            let page = try await transport.pull(request)
            lowest = min(lowest, page.cursor)
            // The first page's: a purge during the later pages may have removed deletions they'd have brought.
            let epoch = firstEpoch ?? page.purgeEpoch
            firstEpoch = epoch
            let horizon = lowest
            let earlier = dangling
            let (dropped, unresolved) = try await database.write { [entities] context in
                try SyncJournal.markRemoteApply()
                try Self.apply(page.changes, in: context, entities: entities, generation: generation)
                let dangling = earlier + SyncJournal.currentDanglingReferences()
                if page.next == nil {
                    try Self.checkReferences(dangling, in: context, entities: entities)
                    try finish(context, horizon, epoch)
                }
                return (try Self.droppedByCascade(in: context, entities: entities), dangling)
            }
            dangling = unresolved
            publish(dropped)
            pulled += Pulled(count: page.changes.count, rejections: dropped)
            broadcast.publish(.pulling(pulled.count))
            after = page.next
        } while after != nil
        return pulled
    }

    /// Applies pulled changes, except to records with local changes not yet pushed.
    private static func apply(
        _ changes: [SyncChange], in context: some DatabaseContext, entities: SyncedEntities, generation: Int64?
    ) throws {
        for change in entities.applyOrder(changes, entity: \.entity, deletes: \.isDeletion) {
            let entry = try entities.entry(change.entity)
            let id = SyncRecordState.id(entity: change.entity, key: change.key)
            var state =
                try context.recover(SyncRecordState.self, id: id)
                ?? SyncRecordState(entity: change.entity, key: change.key)
            guard state.pending == 0 else { continue }
            try context.storeSynced(entry, key: change.key, record: change.record(of: entry.layout))
            state.version = change.version
            if let generation { state.generation = generation }
            try context.upsert(state)
        }
    }

    /// Checks, once a pull's pages are all applied, that the records pulled records referred to before they arrived
    /// are there now — or deleted locally by a change not yet pushed (its push settles it).
    /// - Throws: `referenceNotFound` when one isn't: the client's scopes hold a record but
    ///   not one it refers to. The pull's last page rolls back; the next pull tries again.
    private static func checkReferences(
        _ references: [DanglingReference], in context: some DatabaseContext, entities: SyncedEntities
    ) throws {
        for reference in references {
            // The referring record may have gone or changed since (a later page deleted or moved it).
            let source = try entities.entry(reference.source)
            guard let referring = try context.syncedRecord(source, key: reference.sourceKey),
                referring[reference.foreignKey] == reference.key
            else { continue }
            let target = try entities.entry(reference.target)
            if try context.syncedRecord(target, key: reference.key) != nil { continue }
            let state = try context.recover(
                SyncRecordState.self, id: SyncRecordState.id(entity: reference.target, key: reference.key))
            if let state, state.pending > 0 { continue }
            throw PersistenceError(
                .referenceNotFound,
                "pulled \(reference.source) records refer to a \(reference.target) record the client doesn't hold:"
                    + " subscribe to scopes that hold what the records of your scopes refer to")
        }
    }

    /// Deletes every local record without unpushed changes that the resync of `generation` didn't apply.
    private static func sweep(in context: some DatabaseContext, entities: SyncedEntities, keeping generation: Int64)
        throws
    {
        for entry in entities.all.reversed() {
            var stale: [Value] = []
            try context.forEachSyncedKey(entry) { key in
                let state = try context.recover(
                    SyncRecordState.self, id: SyncRecordState.id(entity: entry.layout.entity.name, key: key))
                if state?.pending ?? 0 == 0 && state?.generation != generation { stale.append(key) }
            }
            for key in stale {
                try context.storeSynced(entry, key: key, record: nil)
            }
        }
    }

    // MARK: Client

    /// The store's client id, made and stored on first use.
    private func clientID() async throws -> String {
        if let id = try await database.read({ try $0.recover(SyncClientState.self, id: 1)?.clientID }) {
            return id
        }
        return try await database.write { context in
            try SyncJournal.markRemoteApply()
            let client = try SyncClientState.current(in: context)
            try context.upsert(client)
            return client.clientID
        }
    }
}

/// Runs syncs of one client one at a time, in the order they were asked for.
private actor SyncGate {
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
