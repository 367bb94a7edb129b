import Foundation
import PersistenceCore

/// Pulling: pages of the server's changes, scope changes, resyncs.
extension SyncClient {
    /// What pulls did: how many changes came, and the local changes they made void.
    struct Pulled: Sendable {
        var count = 0
        var rejections: [SyncRejection] = []

        static func += (lhs: inout Pulled, rhs: Pulled) {
            lhs.count += rhs.count
            lhs.rejections += rhs.rejections
        }
    }

    func pullAll() async throws -> Pulled {
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
    func changes(clientID: String, scopes: [SyncScope]?) async throws -> Pulled {
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
    func resync(clientID: String, scopes: [SyncScope]?) async throws -> Pulled {
        // Taken before the first page: a resync that fails part-way has stamped records with its generation, and the
        // next one must not count them as brought by it.
        // A store that held no synced record then (a first sync) has nothing the sweep could remove: records written
        // locally meanwhile are pending, and the sweep keeps those.
        let (generation, held) = try await database.write { [entities] context in
            try SyncJournal.markRemoteApply()
            var client = try SyncClientState.current(in: context)
            client.generation += 1
            try context.upsert(client)
            return (client.generation, try entities.all.contains { try context.holdsSyncedRecords($0) })
        }
        let wanted = SyncScopes.text(of: scopes)
        return try await pages(
            clientID: clientID, cursor: 0, scopes: scopes, snapshot: true, generation: generation,
            finish: { [entities] context, horizon, epoch in
                if held { try Self.sweep(in: context, entities: entities, keeping: generation) }
                var client = try SyncClientState.current(in: context)
                client.cursor = horizon
                client.purgeEpoch = epoch
                client.syncedScopes = wanted
                try context.upsert(client)
            })
    }

    /// Pulls pages until the last, each applied in one local write; `finish` runs in the last page's write with the
    /// lowest cursor the pages gave (every change after it is in a later pull).
    func pages(
        clientID: String, cursor: Int64, scopes: [SyncScope]?, snapshot: Bool, generation: Int64?,
        finish: @escaping @Sendable (Store.Context, _ cursor: Int64, _ purgeEpoch: Int64) throws -> Void
    ) async throws -> Pulled {
        let client = try await database.read { try SyncClientState.current(in: $0) }
        let purgeEpoch = client.purgeEpoch
        // Applied records carry the resync's generation, or the store's current one.
        let generation = generation ?? client.generation
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

    /// Applies pulled changes, except to records with local changes not yet pushed; each applied record's journal
    /// entry takes the change's version and `generation`.
    static func apply(
        _ changes: [SyncChange], in context: some DatabaseContext, entities: SyncedEntities, generation: Int64
    ) throws {
        // With no local change pending anywhere (most pulls), no entry needs reading first: each is written whole.
        let anyPending = try !context.recover(
            SyncRecordState.self, query: Query(where: Field("isPending") == true, limit: 1)
        ).isEmpty
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

    /// Checks, once a pull's pages are all applied, that the records pulled records referred to before they arrived
    /// are there now — or deleted locally by a change not yet pushed (its push settles it).
    /// - Throws: `referenceNotFound` when one isn't: the client's scopes hold a record but
    ///   not one it refers to. The pull's last page rolls back; the next pull tries again.
    static func checkReferences(
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
