import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// Pushing: whole outbox sequences in batches, and what the server's answers do to the journal.
extension SyncClient {
    func pushAll() async throws -> SyncReport {
        var report = SyncReport()
        let clientID = try await clientState().clientID
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
            let rejections = try await database.write(options: .appliesRemoteChanges) { [entities] context in
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
    static func pendingBatch(
        in context: some DatabaseContext, entities: SyncedEntities, limit: Int
    ) throws -> [SyncPush.Entry] {
        var states = try context.recover(
            SyncRecordState.self,
            query: Query(where: Field("isPending") == true, sortedBy: [.ascending("pending")], limit: limit + 1))
        guard var through = states.last?.pending else { return [] }
        // Whole sequences only: the records read are all of them up to `through`, unless the limit cut the last one.
        var complete = states.count <= limit
        if !complete {
            let earlier = states.filter { $0.pending < through }
            if let last = earlier.last {
                through = last.pending
                states = earlier
                complete = true
            }
        }
        while true {
            if !complete {
                states = try context.recover(
                    SyncRecordState.self,
                    query: Query(
                        where: Field("isPending") == true && Field("pending") <= through,
                        sortedBy: [.ascending("pending")]))
            }
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
            complete = false
        }
    }

    /// Applies a push's outcomes: acknowledged records are no longer pending; a merged or rejected one takes the
    /// server's state unless it changed locally again since, and is reported.
    static func acknowledge(
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
                // Both are reported: a merge stored something else than what was pushed (another value, a deletion
                // undone or made), and the app may need to know as much as of a rejection.
                let merged = outcome.kind == .merged
                rejections.append(
                    SyncRejection(
                        entity: outcome.entity, key: outcome.key,
                        reason: outcome.reason
                            ?? (merged
                                ? "the server's merge policy stored a merged state"
                                : "the server's conflict policy kept its own state"),
                        serverState: outcome.current, sequence: outcome.sequence, kind: merged ? .merged : .rejected))
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
    static func droppedByCascade(in context: some DatabaseContext, entities: SyncedEntities) throws
        -> [SyncRejection]
    {
        // Only records with unpushed changes can be dropped: usually none, then nothing else is read.
        let pending = try context.recover(SyncRecordState.self, query: Query(where: Field("isPending") == true))
        guard !pending.isEmpty else { return [] }
        let changes = context.changeRecorder?.changedKeys() ?? []
        let changed = Dictionary(changes.map { ($0.entity, Set($0.keys)) }) { $0.union($1) }
        var dropped: [SyncRejection] = []
        for var state in pending {
            let key = try state.keyValue()
            guard changed[state.entity]?.contains(key) == true, let entry = try? entities.entry(state.entity),
                try context.syncedRecord(entry, key: key) == nil
            else { continue }
            dropped.append(
                SyncRejection(
                    entity: state.entity, key: key,
                    reason: "deleted on the server with a record it belongs to (a cascade delete rule)",
                    serverState: SyncChange(entity: state.entity, key: key, values: nil, version: state.version),
                    sequence: state.pending, kind: .deletedByCascade))
            state.pending = 0
            try context.upsert(state)
        }
        return dropped
    }

    func publish(_ rejections: [SyncRejection]) {
        guard !rejections.isEmpty else { return }
        let subscribers = rejectionSubscribers.withLock { Array($0.values) }
        for subscriber in subscribers {
            for rejection in rejections { subscriber.yield(rejection) }
        }
    }
}
