import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// Pulling: pages of the server's changes, scope changes, resyncs.
extension SyncClient {
    /// What pulls did: how many changes came, the local changes they made void, and whether one was a resync.
    struct Pulled: Sendable {
        var count = 0
        var rejections: [SyncRejection] = []
        var resynced = false

        static func += (lhs: inout Pulled, rhs: Pulled) {
            lhs.count += rhs.count
            lhs.rejections += rhs.rejections
            lhs.resynced = lhs.resynced || rhs.resynced
        }
    }

    /// The client's record is read once here and handed on; a step that changes it (a resync, added scopes) has the
    /// next step read it again.
    func pullAll() async throws -> Pulled {
        let client = try await clientState()
        let clientID = client.clientID
        let scopes = self.scopes
        let wanted = SyncScopes.text(of: scopes)
        // A resync cut short goes on first, whatever made it start (a dropped scope, a purge, the first sync).
        let resyncing = SyncPullProgress.stored(in: client).map {
            $0.continues(.resync, modelVersion: entities.model.version, scopes: wanted, cursor: 0)
        }
        var pulled = Pulled()
        // The client's record as the next step finds it: `nil` once a step changed it.
        var current: SyncClientState? = client
        if client.syncedScopes == nil || client.cursor == 0 || resyncing == true {
            pulled += try await resync(clientID: clientID, scopes: scopes, client: client)
            current = nil
        } else if client.syncedScopes != wanted {
            let added = SyncScopes.added(to: client.syncedScopes, in: scopes)
            if let added {
                // Only new scopes: their records now, then every change since the cursor for all of them.
                pulled += try await pages(
                    clientID: clientID, kind: .addedScopes, cursor: 0, scopes: added, generation: nil,
                    client: client, resuming: resumable(.addedScopes, scopes: added, cursor: 0, in: client),
                    finish: { _, client, _, _ in client.syncedScopes = wanted })
            } else {
                pulled += try await resync(clientID: clientID, scopes: scopes, client: client)
            }
            current = nil
        }
        do {
            pulled += try await changes(clientID: clientID, scopes: scopes, client: current)
        } catch let error as PersistenceError where error.code == .resyncRequired {
            pulled += try await resync(clientID: clientID, scopes: scopes, client: nil)
            pulled += try await changes(clientID: clientID, scopes: scopes, client: nil)
        }
        return pulled
    }

    /// The progress of the pull described that `client` holds, stored by an earlier sync that stopped part-way; `nil`
    /// when it holds none, or another pull's.
    func resumable(_ kind: SyncPullProgress.Kind, scopes: [SyncScope]?, cursor: Int64, in client: SyncClientState)
        -> SyncPullProgress?
    {
        guard let progress = SyncPullProgress.stored(in: client),
            progress.continues(
                kind, modelVersion: entities.model.version, scopes: SyncScopes.text(of: scopes), cursor: cursor)
        else { return nil }
        return progress
    }

    /// Pulls every change since the store's cursor, then moves the cursor. `client` is the client's record when the
    /// caller has it as stored; `nil` reads it.
    func changes(clientID: String, scopes: [SyncScope]?, client: SyncClientState?) async throws -> Pulled {
        let client = try await stored(client)
        let cursor = client.cursor
        return try await pages(
            clientID: clientID, kind: .changes, cursor: cursor, scopes: scopes, generation: nil, client: client,
            resuming: resumable(.changes, scopes: scopes, cursor: cursor, in: client),
            finish: { _, client, horizon, epoch in
                client.cursor = max(client.cursor, horizon)
                client.purgeEpoch = max(client.purgeEpoch, epoch)
            })
    }

    /// Pulls the scopes' records whole, removes every clean local record it didn't get, and restarts the cursor from
    /// the snapshot: the first sync, a dropped scope, a client offline for longer than the server keeps deletions.
    /// A resync that stopped part-way goes on from its last applied page, with its generation.
    func resync(clientID: String, scopes: [SyncScope]?, client: SyncClientState?) async throws -> Pulled {
        let before = try await stored(client)
        let resumed = resumable(.resync, scopes: scopes, cursor: 0, in: before)
        // Taken before the first page: a resync that fails part-way has stamped records with its generation, and the
        // next one must not count them as brought by it — unless it goes on with the same generation.
        // A store that held no synced record then (a first sync) has nothing the sweep could remove: records written
        // locally meanwhile are pending, and the sweep keeps those.
        let (generation, held, first) = try await database.write(options: .appliesRemoteChanges) { [entities] context in
            var client = try SyncClientState.current(in: context)
            let first = client.syncedScopes == nil
            if let resumed { return (client.generation, resumed.sweeps, first) }
            client.generation += 1
            client.pull = nil
            try context.upsert(client)
            return (client.generation, try entities.all.contains { try context.holdsSyncedRecords($0) }, first)
        }
        let wanted = SyncScopes.text(of: scopes)
        var pulled = try await pages(
            clientID: clientID, kind: .resync, cursor: 0, scopes: scopes, generation: generation, sweeps: held,
            client: before, resuming: resumed,
            finish: { [entities] context, client, horizon, epoch in
                if held { try Self.sweep(in: context, entities: entities, keeping: generation) }
                client.cursor = horizon
                client.purgeEpoch = epoch
                client.syncedScopes = wanted
            })
        // A store's first sync isn't a resync: it had nothing to resync.
        pulled.resynced = !first
        return pulled
    }

    /// `client` when given, else the client's record read from the store.
    private func stored(_ client: SyncClientState?) async throws -> SyncClientState {
        if let client { return client }
        return try await database.read { try SyncClientState.current(in: $0) }
    }

    /// What a pull does in its last page's write: the store's client record, changed by it and then stored, and the
    /// lowest cursor and the first purge epoch the pages gave.
    typealias Finish =
        @Sendable (Store.Context, inout SyncClientState, _ cursor: Int64, _ purgeEpoch: Int64) throws
        -> Void

    /// Pulls pages until the last, each applied in one local write that also stores where the pull stands (so that
    /// a pull cut short goes on from `resuming`, the progress its last applied page stored); `finish` runs in the last
    /// page's write with the lowest cursor the pages gave (every change after it is in a later pull).
    ///
    /// `client` is the client's record as stored before the first page (its purge epoch and generation).
    func pages(
        clientID: String, kind: SyncPullProgress.Kind, cursor: Int64, scopes: [SyncScope]?, generation: Int64?,
        sweeps: Bool = false, client: SyncClientState, resuming: SyncPullProgress?,
        finish: @escaping Finish
    ) async throws -> Pulled {
        let purgeEpoch = client.purgeEpoch
        // Applied records carry the resync's generation, or the store's current one.
        let generation = generation ?? client.generation
        let scopesText = SyncScopes.text(of: scopes)
        let modelVersion = entities.model.version
        var after = resuming?.after
        var lowest = resuming?.horizon ?? Int64.max
        var firstEpoch = resuming?.purgeEpoch
        var pulled = Pulled()
        // References to records a later page may bring.
        var dangling = resuming?.references ?? []
        let maximumPage = pullPageSize
        let pacing = self.pacing
        // Pages as large as the link carries in about a quarter of a second (the first, while no page has arrived,
        // 1,000 changes; fewer after lost connections).
        var pageSize = pacing.pageSize(maximum: maximumPage)
        let request = { @Sendable (after: SyncPosition?, limit: Int, counts: Bool) in
            SyncPullRequest(
                clientID: clientID, modelVersion: modelVersion, cursor: cursor, after: after, limit: limit,
                scopes: scopes, isSnapshot: kind != .changes, purgeEpoch: purgeEpoch, countsRemaining: counts)
        }
        let phase: SyncProgress.Phase =
            switch kind {
            case .resync: .wholeScopes
            case .addedScopes: .addedScopes
            case .changes: .changes
            }
        var progress = SyncProgress(phase: phase, applied: 0, bytes: 0, expected: nil)
        // The next page is requested as soon as a page arrives, and read by the server while this one is applied.
        var prefetched: Task<(SyncPullPage, Duration), any Error>?
        defer { prefetched?.cancel() }
        let transport = self.transport
        /// A page, and how long it took to arrive.
        let fetch = { @Sendable (request: SyncPullRequest) async throws -> (SyncPullPage, Duration) in
            let clock = ContinuousClock()
            let start = clock.now
            do {
                let page = try await transport.pull(request)
                return (page, clock.now - start)
            } catch {
                if SyncPullPacing.isConnectionLoss(error) { pacing.lost() }
                throw error
            }
        }
        repeat {
            let (page, roundTrip): (SyncPullPage, Duration)
            if let prefetched {
                (page, roundTrip) = try await prefetched.value
            } else {
                (page, roundTrip) = try await fetch(request(after, pageSize, true))
                progress.expected = page.remaining
            }
            let bytes = page.changes.reduce(0) { $0 + $1.valueBytes }
            pacing.arrived(bytes: bytes, changes: page.changes.count, in: roundTrip)
            pageSize = pacing.pageSize(maximum: maximumPage)
            prefetched = page.next.map { [pageSize] next in
                Task { try await fetch(request(next, pageSize, false)) }
            }
            lowest = min(lowest, page.cursor)
            // The first page's: a purge during the later pages may have removed deletions they'd have brought.
            let epoch = firstEpoch ?? page.purgeEpoch
            firstEpoch = epoch
            let horizon = lowest
            let earlier = dangling
            let (dropped, unresolved) = try await database.write(options: .appliesRemoteChanges) { [entities] context in
                try Self.apply(page.changes, in: context, entities: entities, generation: generation)
                let references = context.changeRecorder?.danglingReferences ?? []
                let dangling = earlier + references.map(SyncPullProgress.Reference.init)
                var client = try SyncClientState.current(in: context)
                if let next = page.next {
                    client.pull = try SyncPullProgress(
                        kind: kind, modelVersion: modelVersion, scopes: scopesText, cursor: cursor, after: next,
                        horizon: horizon, purgeEpoch: epoch, sweeps: sweeps, references: dangling
                    ).text()
                } else {
                    try Self.checkReferences(dangling, in: context, entities: entities)
                    try finish(context, &client, horizon, epoch)
                    client.pull = nil
                }
                try context.upsert(client)
                return (try Self.droppedByCascade(in: context, entities: entities), dangling)
            }
            dangling = unresolved
            publish(dropped)
            pulled += Pulled(count: page.changes.count, rejections: dropped)
            broadcast.publish(.pulling(pulled.count))
            progress.applied += page.changes.count
            progress.bytes += bytes
            if progress.applied > 0 { progressBroadcast.publish(progress) }
            after = page.next
        } while after != nil
        return pulled
    }

    /// Applies pulled changes, except to records with local changes not yet pushed; each applied record's journal
    /// entry takes the change's version and `generation`.
    static func apply(
        _ changes: [SyncChange], in context: some DatabaseContext, entities: SyncedEntities, generation: Int64
    ) throws {
        // With no local change pending anywhere (most pulls), no entry needs reading first: each is written whole.
        let anyPending = try !context.recover(
            SyncRecordState.self, query: Query(where: Field("isPending") == true, limit: 1)
        ).isEmpty
        guard anyPending else {
            return try applyAll(changes, in: context, entities: entities, generation: generation)
        }
        for change in entities.applyOrder(changes, entity: \.entity, deletes: \.isDeletion) {
            let entry = try entities.entry(change.entity)
            var state = SyncRecordState(entity: change.entity, key: change.key)
            if anyPending, let stored = try context.recover(SyncRecordState.self, id: state.id) {
                guard stored.pending == 0 else { continue }
                state = stored
            }
            try context.storeSynced(entry, key: change.key, record: change.record(of: entry.layout))
            state.version = change.version
            state.generation = generation
            try context.upsert(state)
        }
    }

    /// Applies pulled changes when no record has local changes: each run of one entity's records written in few
    /// statements (a query for which are stored, then the multi-row write), each run of deletions as one delete
    /// with its rules, and the journal entries written whole the same way — no entry read first.
    private static func applyAll(
        _ changes: [SyncChange], in context: some DatabaseContext, entities: SyncedEntities, generation: Int64
    ) throws {
        let ordered = entities.applyOrder(changes, entity: \.entity, deletes: \.isDeletion)
        var start = ordered.startIndex
        while start < ordered.endIndex {
            let first = ordered[start]
            var end = start + 1
            while end < ordered.endIndex, ordered[end].entity == first.entity,
                ordered[end].isDeletion == first.isDeletion
            {
                end += 1
            }
            let entry = try entities.entry(first.entity)
            let run = ordered[start..<end]
            if first.isDeletion {
                try context.deleteSynced(entry, keys: run.map(\.key))
            } else {
                let records = try run.compactMap { try $0.record(of: entry.layout) }
                let stored = try context.storedSyncedKeys(entry, among: records.map(\.primaryKey))
                try context.storeSynced(
                    entry, records: records, exists: records.map { stored.contains($0.primaryKey) })
            }
            start = end
        }
        let states = ordered.map { change in
            var state = SyncRecordState(entity: change.entity, key: change.key)
            state.version = change.version
            state.generation = generation
            return state
        }
        try context.storeJournal(states)
    }

    /// Checks, once a pull's pages are all applied, that the records pulled records referred to before they arrived
    /// are there now — or deleted locally by a change not yet pushed (its push settles it).
    /// - Throws: `referenceNotFound` when one isn't: the client's scopes hold a record but
    ///   not one it refers to. The pull's last page rolls back; the next pull tries again.
    static func checkReferences(
        _ references: [SyncPullProgress.Reference], in context: some DatabaseContext, entities: SyncedEntities
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
    static func sweep(in context: some DatabaseContext, entities: SyncedEntities, keeping generation: Int64)
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
}
