import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistencePostgres
import PersistenceSQL
import PersistenceSync

/// One client's push as the server applies it: decoded before its transaction, then applied set-based inside it.
///
/// In the transaction: the client's row is locked and its last applied sequence read; an advisory lock is taken on
/// each record of the batch (in one order, so pushes never deadlock each other); a statement per entity reads the
/// stored records of the batch, locking them, and one their logged versions; each change is decided in memory
/// (scopes, conflict policy — a merge block runs once); the writes go as a multi-row statement per entity,
/// referenced entities first, and the deletions as one statement per entity, children first. Deletions of records
/// that others refer to go one by one with fresh reads, their delete rules (a cascade) changing what later changes
/// find. When the store refuses the multi-row writes (a unique index, a missing reference), they are undone and
/// written one by one, each in its savepoint, so that only the refused change is rejected — the decisions stay as
/// made. A record created or deleted by another writer since it was read fails the transaction as a conflict, and
/// the push runs again.
///
/// A batch that deletes no record others may refer to runs under `READ COMMITTED` (``locksRows``): its locks are all
/// it needs, so pushes of different records run at once — on one server or several. A reference it checks is kept
/// until it commits: the record referred to is locked and given a new row version with the same values
/// (`PostgresStorage.lockReferenced`), so a deletion waits for the push, and a serializable deletion that began before
/// (the app's, another push's) fails and runs again, then finding the record that now refers to it. A batch that
/// deletes a record with delete rules runs `SERIALIZABLE`, pushes taking turns: the referrers its rules find must stay
/// all there are against the app's own writes, which take no locks.
struct PushBatch: Sendable {
    let push: SyncPush
    let scopes: ResolvedScopes
    let entities: SyncedEntities
    let policies: [String: ConflictPolicy]
    /// Each entry's record as pushed (`nil`: a deletion), or why it doesn't fit the model — thrown only if the entry
    /// is applied (an already applied one isn't read again).
    let incoming: [Result<Record?, any Error>]
    /// Whether the batch deletes no record that others may refer to (no delete rule to run): it runs under
    /// `READ COMMITTED`, locking what it reads and refers to, at once with other pushes.
    let locksRows: Bool

    init(push: SyncPush, scopes: ResolvedScopes, entities: SyncedEntities, policies: [String: ConflictPolicy]) {
        self.push = push
        self.scopes = scopes
        self.entities = entities
        self.policies = policies
        incoming = push.entries.map { entry in
            Result { try entry.change.record(of: try entities.entry(entry.change.entity).layout) }
        }
        locksRows = push.entries.allSatisfy { pushed in
            guard let entry = try? entities.entry(pushed.change.entity) else { return false }
            return !(pushed.change.isDeletion && entry.hasDeleteRules)
        }
    }

    /// A change's decision: its outcome, and what it writes.
    private struct Decision {
        var outcome: SyncPushResult.Outcome
        /// The record's new state (`nil`: deleted), when the change writes one.
        var write: Record??
    }

    /// A write decided for the batch.
    private struct Write {
        let index: Int
        let entry: SyncedEntities.Entry
        let key: Value
        let record: Record?
        let exists: Bool
    }

    /// What the transaction does, in order.
    private enum Step {
        case write(Write)
        /// A deletion decided with fresh reads when its turn comes (records refer to it: its delete rules run).
        case oneByOne(Int)
    }

    func apply(in context: PostgresContext) throws -> SyncPushResult {
        let (applied, version) = try noteSequence(in: context)
        var outcomes = [SyncPushResult.Outcome?](repeating: nil, count: push.entries.count)
        var pending: [Int] = []
        for (index, entry) in push.entries.enumerated() {
            guard entry.sequence > applied else {
                outcomes[index] = .init(
                    sequence: entry.sequence, entity: entry.change.entity, key: entry.change.key,
                    kind: .alreadyApplied, current: entry.change, reason: nil)
                continue
            }
            pending.append(index)
        }
        let ordered = entities.applyOrder(
            pending, entity: { push.entries[$0].change.entity }, deletes: { push.entries[$0].change.isDeletion })
        let keys = Set(pending.map { SyncKey(push.entries[$0].change) })
        guard keys.count == pending.count else {
            // One record twice in a batch (clients send each once): each change decided after the one before.
            try lock(keys, in: context)
            for index in ordered { outcomes[index] = try applyOne(index, version: version, in: context) }
            try noteApplied(after: applied, in: context)
            return SyncPushResult(outcomes: outcomes.compactMap { $0 })
        }
        try lock(keys, in: context)
        let (stored, versions) = try read(pending, in: context)
        var steps: [Step] = []
        for index in ordered {
            let change = push.entries[index].change
            let entry = try entities.entry(change.entity)
            if change.isDeletion && entry.hasDeleteRules {
                steps.append(.oneByOne(index))
                continue
            }
            let current = stored[change.entity]?[change.key]
            let decision = try decide(
                index, entry, stored: current, serverVersion: versions[SyncKey(change)] ?? 0, version: version)
            outcomes[index] = decision.outcome
            if case .some(let record) = decision.write {
                steps.append(
                    .write(Write(index: index, entry: entry, key: change.key, record: record, exists: current != nil)))
            }
        }
        try run(steps, outcomes: &outcomes, version: version, in: context)
        try noteApplied(after: applied, in: context)
        return SyncPushResult(outcomes: outcomes.compactMap { $0 })
    }

    /// Locks the client's row (its pushes take turns) and reads its last applied sequence, with this transaction's
    /// id (the version of what it writes): one round trip.
    private func noteSequence(in context: PostgresContext) throws -> (applied: Int64, version: Int64) {
        let clients = SyncServer.qualified(context, SyncLog.clientsTable)
        guard
            let row = try context.internalRows(
                """
                INSERT INTO \(clients) (client_id, last_sequence, seen_at) VALUES ($1, 0, pg_catalog.now())
                ON CONFLICT (client_id) DO UPDATE SET seen_at = excluded.seen_at
                RETURNING last_sequence, pg_catalog.pg_current_xact_id()::text::bigint
                """, [.text(push.clientID)]
            ).first, case .integer(let applied) = row[0], case .integer(let version) = row[1]
        else {
            throw PersistenceError(.backend, "the server gave no transaction id")
        }
        return (applied, version)
    }

    /// Notes the push's highest sequence as the client's last applied one, when it is higher.
    private func noteApplied(after applied: Int64, in context: PostgresContext) throws {
        guard let last = push.entries.map(\.sequence).max(), last > applied else { return }
        _ = try context.internalRows(
            "UPDATE \(SyncServer.qualified(context, SyncLog.clientsTable)) SET last_sequence = $2 WHERE client_id = $1",
            [.text(push.clientID), .integer(last)])
    }

    /// Takes a transaction-level advisory lock per record of the batch, in ascending order (two pushes never wait for
    /// each other in a cycle): pushes of one record take turns, on every server of the store. The locks are 32-bit
    /// digests of the record's entity and key, in a space of the store's schema; two records sharing one only take
    /// turns.
    private func lock(_ keys: Set<SyncKey>, in context: PostgresContext) throws {
        guard !keys.isEmpty else { return }
        let space = Self.digest(Data(context.schemaName.utf8))
        let digests = Set(keys.map { Self.digest(Data($0.entity.utf8) + [0] + $0.bytes) }).sorted()
        var start = digests.startIndex
        while start < digests.endIndex {
            let end = min(start + 1_000, digests.endIndex)
            let rows = (start..<end).map { "($\($0 - start + 2)::integer)" }.joined(separator: ", ")
            _ = try context.internalRows(
                "SELECT count(pg_catalog.pg_advisory_xact_lock($1::integer, k)) FROM (VALUES \(rows)) AS v(k)",
                [.integer(Int64(space))] + digests[start..<end].map { .integer(Int64($0)) })
            start = end
        }
    }

    /// The store's advisory lock key of `bytes` (FNV-1a), folded to 32 bits: the same in every process.
    private static func digest(_ bytes: Data) -> Int32 {
        let hash = UInt64(bitPattern: PostgresDatabase.advisoryLockKey(bytes: bytes))
        return Int32(truncatingIfNeeded: hash ^ (hash >> 32))
    }

    /// The stored records of the pending changes, locked until the transaction ends, and their logged versions (read
    /// after the lock: a locked record's version can't change): two statements per entity.
    private func read(_ pending: [Int], in context: PostgresContext) throws
        -> (stored: [String: [Value: Record]], versions: [SyncKey: Int64])
    {
        var stored: [String: [Value: Record]] = [:]
        var versions: [SyncKey: Int64] = [:]
        let log = SyncServer.qualified(context, SyncLog.table)
        // Entities in name order: every push locks rows in one order.
        let groups = Dictionary(grouping: pending, by: { push.entries[$0].change.entity })
        for (name, indices) in groups.sorted(by: { $0.key < $1.key }) {
            let entry = try entities.entry(name)
            let keys = indices.map { push.entries[$0].change.key }
            stored[name] = try Self.locked(entry.type, keys: keys, layout: entry.layout, in: context)
            var start = keys.startIndex
            while start < keys.endIndex {
                let end = min(start + 1_000, keys.endIndex)
                let placeholders = (start..<end).map { "$\($0 - start + 2)" }.joined(separator: ", ")
                let rows = try context.internalRows(
                    "SELECT key, version FROM \(log) WHERE entity = $1 AND key IN (\(placeholders))",
                    [.text(name)] + keys[start..<end].map { .blob(SyncLog.bytes(of: $0)) })
                for row in rows {
                    guard case .blob(let bytes) = row[0], case .integer(let version) = row[1] else {
                        throw PersistenceError(.corrupt, "the sync log holds a malformed row")
                    }
                    versions[SyncKey(entity: name, bytes: bytes)] = version
                }
                start = end
            }
        }
        return (stored, versions)
    }

    private static func locked<E: Entity>(
        _ type: E.Type, keys: [Value], layout: RecordLayout, in context: PostgresContext
    ) throws -> [Value: Record] {
        var records: [Value: Record] = [:]
        for values in try context.lockedRecordValues(E.self, keys: keys) {
            let record = try Record(layout: layout, values: values)
            records[record.primaryKey] = record
        }
        return records
    }

    /// Writes the decided changes in order: consecutive writes of one entity (or deletions of one) in one statement,
    /// all the writes in one savepoint; when the store refuses them, one by one.
    private func run(
        _ steps: [Step], outcomes: inout [SyncPushResult.Outcome?], version: Int64, in context: PostgresContext
    ) throws {
        let writes = steps.compactMap { step -> Write? in
            if case .write(let write) = step, write.record != nil { return write }
            return nil
        }
        do {
            try context.savepoint {
                for group in Self.runs(of: writes) {
                    try context.storeSynced(
                        group[0].entry, records: group.compactMap(\.record), exists: group.map(\.exists))
                }
            }
        } catch let error as PersistenceError where Self.changedMeanwhile(error) {
            throw Self.conflict(error)
        } catch let error as PersistenceError where SyncServer.refusesOneChange(error) {
            for write in writes { try writeOne(write, outcomes: &outcomes, in: context) }
        }
        var deletions: [Write] = []
        let flush = {
            for group in Self.runs(of: deletions) {
                try context.deleteSynced(group[0].entry, keys: group.map(\.key))
            }
            deletions.removeAll()
        }
        for step in steps {
            switch step {
            case .write(let write):
                if write.record == nil { deletions.append(write) }
            case .oneByOne(let index):
                try flush()
                outcomes[index] = try applyOne(index, version: version, in: context)
            }
        }
        try flush()
    }

    /// Consecutive items of one entity, together.
    private static func runs(of writes: [Write]) -> [[Write]] {
        var runs: [[Write]] = []
        for write in writes {
            if let last = runs.last?.last, last.entry.layout.entity.name == write.entry.layout.entity.name {
                runs[runs.count - 1].append(write)
            } else {
                runs.append([write])
            }
        }
        return runs
    }

    /// Writes one decided change in its savepoint; a refusal rejects it alone, with the server's state.
    private func writeOne(
        _ write: Write, outcomes: inout [SyncPushResult.Outcome?], in context: PostgresContext
    ) throws {
        do {
            try context.savepoint {
                try context.storeSynced(write.entry, key: write.key, record: write.record, exists: write.exists)
            }
        } catch let error as PersistenceError where Self.changedMeanwhile(error) {
            throw Self.conflict(error)
        } catch let error as PersistenceError where SyncServer.refusesOneChange(error) {
            outcomes[write.index] = try refused(write.index, write.entry, error, in: context)
        }
    }

    /// Whether `error` says a record read as stored (or not) was deleted (or created) since, by a writer that took
    /// none of the push's locks — the app's own write, another program's.
    private static func changedMeanwhile(_ error: PersistenceError) -> Bool {
        error.code == .duplicateKey || error.code == .notFound
    }

    /// The conflict that runs the push again, with fresh reads.
    private static func conflict(_ error: PersistenceError) -> PersistenceError {
        PersistenceError(
            .conflict, "a pushed record changed on the server while the push was applied", underlyingError: error)
    }

    /// The outcome of a change the store refused: the server's state, read now.
    private func refused(
        _ index: Int, _ entry: SyncedEntities.Entry, _ error: PersistenceError, in context: PostgresContext
    ) throws -> SyncPushResult.Outcome {
        let pushed = push.entries[index]
        let change = pushed.change
        let stored = try context.syncedRecord(entry, key: change.key)
        return .init(
            sequence: pushed.sequence, entity: change.entity, key: change.key, kind: .rejected,
            current: SyncChange(
                entity: change.entity, key: change.key, values: stored.map(SyncChange.values(of:)),
                version: try SyncServer.loggedVersion(of: change, in: context)),
            reason: "the server's store refused it: \(error.message)")
    }

    /// Applies one change with its own reads, in its savepoint.
    private func applyOne(_ index: Int, version: Int64, in context: PostgresContext) throws
        -> SyncPushResult.Outcome
    {
        let change = push.entries[index].change
        let entry = try entities.entry(change.entity)
        do {
            return try context.savepoint {
                let stored = try context.syncedRecord(entry, key: change.key)
                let decision = try decide(
                    index, entry, stored: stored,
                    serverVersion: try SyncServer.loggedVersion(of: change, in: context), version: version)
                if case .some(let record) = decision.write {
                    try context.storeSynced(entry, key: change.key, record: record, exists: stored != nil)
                }
                return decision.outcome
            }
        } catch let error as PersistenceError where SyncServer.refusesOneChange(error) {
            // The change breaks a rule of the store (a reference, a unique index, a deny rule): only it is
            // refused, and the client takes the server's state.
            return try refused(index, entry, error, in: context)
        }
    }

    /// Decides one change against the server's state of its record: out of scope, already the server's state, made on
    /// the server's version, or a conflict its entity's policy settles.
    private func decide(
        _ index: Int, _ entry: SyncedEntities.Entry, stored: Record?, serverVersion: Int64, version: Int64
    ) throws -> Decision {
        let pushed = push.entries[index]
        let change = pushed.change
        let incoming = try self.incoming[index].get()
        let decision = { (kind: SyncPushResult.Kind, current: SyncChange, reason: String?, write: Record??) in
            Decision(
                outcome: .init(
                    sequence: pushed.sequence, entity: change.entity, key: change.key, kind: kind, current: current,
                    reason: reason),
                write: write)
        }
        guard try inScope(change.entity, entry, incoming: incoming, stored: stored) else {
            return decision(
                .rejected, SyncChange(entity: change.entity, key: change.key, values: nil, version: 0),
                "the record is outside the client's scopes", nil)
        }
        let written = { (record: Record?) in
            SyncChange(
                entity: change.entity, key: change.key, values: record.map(SyncChange.values(of:)), version: version)
        }
        let serverState = SyncChange(
            entity: change.entity, key: change.key, values: stored.map(SyncChange.values(of:)), version: serverVersion)
        // Already the server's state (both sides deleted it, or made the same change): nothing to write or settle.
        if stored == incoming { return decision(.applied, serverState, nil, nil) }
        // Made on the server's current version; or a record the client never had and the server doesn't hold now
        // (created anew after a deletion the client never saw): no conflict.
        guard serverVersion != change.version, change.version != 0 || stored != nil else {
            return decision(.applied, written(incoming), nil, .some(incoming))
        }
        switch (policies[change.entity] ?? .serverWins).rule {
        case .clientWins:
            return decision(.applied, written(incoming), nil, .some(incoming))
        case .serverWins:
            return decision(.rejected, serverState, "the record changed on the server since the client saw it", nil)
        case .newestStamp:
            if let incoming, let stored, let stamp = entry.layout.stampIndex,
                !incoming.values[stamp].isNull,
                stored.values[stamp].isNull
                    || Value.compare(incoming.values[stamp], stored.values[stamp]) == .orderedDescending
            {
                return decision(.applied, written(incoming), nil, .some(incoming))
            }
            return decision(
                .rejected, serverState,
                incoming == nil || stored == nil
                    ? "the record was changed and deleted on different sides: the server's state stays"
                    : "the server's record has a stamp as new or newer", nil)
        case .merge(let merge):
            let merged = try merge(stored, incoming)
            if let merged, merged.layout.entity.name != entry.layout.entity.name || merged.primaryKey != change.key {
                throw PersistenceError(
                    .invalidValue, "a merge of a \(change.entity) record returned another record")
            }
            // A merge that kept what was pushed stored it as pushed: nothing for the client to hear of.
            if merged == incoming { return decision(.applied, written(merged), nil, .some(merged)) }
            let reason =
                switch (incoming, merged) {
                case (nil, .some): "the merge policy kept the record the client deleted"
                case (.some, nil): "the merge policy deleted the record"
                default: "the merge policy stored other values than the client's"
                }
            return decision(.merged, written(merged), reason, .some(merged))
        }
    }

    /// Whether the client may write the change: its entity is in the client's scopes, and the record is in them both
    /// as the server holds it and as the change leaves it.
    private func inScope(_ name: String, _ entry: SyncedEntities.Entry, incoming: Record?, stored: Record?) throws
        -> Bool
    {
        guard case .some(let condition) = scopes.condition(for: name) else { return false }
        guard let condition else { return true }
        let resolved = try condition.resolve(in: entry.layout)
        if let incoming, !resolved.matches(incoming.values) { return false }
        if let stored, !resolved.matches(stored.values) { return false }
        return true
    }
}

/// A record's identity in the change log: its entity and its key's bytes there.
struct SyncKey: Hashable {
    let entity: String
    let bytes: Data

    init(entity: String, bytes: Data) {
        self.entity = entity
        self.bytes = bytes
    }

    init(_ change: SyncChange) { self.init(entity: change.entity, bytes: SyncLog.bytes(of: change.key)) }
}

extension SyncServer {
    /// Whether `error` refuses one pushed change for a rule of the store's, rather than the whole push.
    static func refusesOneChange(_ error: PersistenceError) -> Bool {
        [.referenceNotFound, .deleteDenied, .uniqueViolation, .duplicateKey, .constraintViolation].contains(error.code)
    }

    /// The version the change log holds for `change`'s record; 0 when it holds none (never written).
    static func loggedVersion(of change: SyncChange, in context: PostgresContext) throws -> Int64 {
        let rows = try context.internalRows(
            "SELECT version FROM \(qualified(context, SyncLog.table)) WHERE entity = $1 AND key = $2",
            [.text(change.entity), .blob(SyncLog.bytes(of: change.key))])
        guard let first = rows.first else { return 0 }
        guard case .integer(let version) = first[0] else {
            throw PersistenceError(.corrupt, "the sync log holds a version that isn't a number")
        }
        return version
    }

    static func qualified(_ context: PostgresContext, _ table: String) -> String {
        quote(context.schemaName) + "." + quote(table)
    }
}
