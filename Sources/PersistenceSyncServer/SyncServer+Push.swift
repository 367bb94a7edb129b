import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import PersistencePostgres
import PersistenceSQL
public import PersistenceSync

extension SyncServer {
    /// Applies a client's push in one transaction: each outbox sequence the client pushed before is skipped
    /// (`SyncPushResult.Kind.alreadyApplied`), each change made on the server's current version of its record is
    /// applied, and each other one is settled by its entity's ``ConflictPolicy``.
    /// - Throws: `unknownEntity` or `invalidValue` for a change the
    ///   server's model can't hold (nothing of the push is applied); what the store throws.
    /// - Parameters:
    ///   - push: The client's batch.
    ///   - access: What the client may sync (the HTTP handler's authentication decides; the direct transport's
    ///     clients are trusted with everything). A change to a record outside the push's scopes — before or after
    ///     it — is rejected, and comes back as a deletion (the client holds no such record).
    /// - Throws: `unauthorized` for scopes `access` doesn't permit,
    ///   `updateRequired` for a client of an older model.
    public func push(_ push: SyncPush, access: SyncAccess = .everything) async throws -> SyncPushResult {
        try checkModelVersion(push.modelVersion)
        let scopes = try ResolvedScopes(push.scopes, access: access, definitions: self.scopes)
        let entities = self.entities
        let policies = self.policies
        // Pushes take turns (a lock of the store's): concurrent ones read and write the same index pages (the
        // clients' table, the change log's), so serializable transactions would nearly all fail each other and retry.
        let key = pushLockKey
        return try await collisionRetries.run {
            try await database.write(takingTurnsOn: key) { context in
                try Self.apply(push, in: context, entities: entities, policies: policies, scopes: scopes)
            }
        }
    }

    private static func apply(
        _ push: SyncPush, in context: PostgresContext, entities: SyncedEntities, policies: [String: ConflictPolicy],
        scopes: ResolvedScopes
    ) throws -> SyncPushResult {
        let clients = qualified(context, SyncLog.clientsTable)
        let applied =
            try context.internalRows(
                "SELECT last_sequence FROM \(clients) WHERE client_id = $1", [.text(push.clientID)]
            ).first.map { row -> Int64 in
                if case .integer(let sequence) = row[0] { return sequence }
                return 0
            } ?? 0
        guard
            case .integer(let version)? = try context.internalRows(
                "SELECT pg_catalog.pg_current_xact_id()::text::bigint"
            ).first?.values.first
        else {
            throw PersistenceError(.backend, "the server gave no transaction id")
        }
        var outcomes: [Int: SyncPushResult.Outcome] = [:]
        let ordered = entities.applyOrder(Array(push.entries.enumerated()), entity: \.element.change.entity) {
            $0.element.change.isDeletion
        }
        for (index, entry) in ordered {
            let change = entry.change
            guard entry.sequence > applied else {
                outcomes[index] = .init(
                    sequence: entry.sequence, entity: change.entity, key: change.key, kind: .alreadyApplied,
                    current: change, reason: nil)
                continue
            }
            let syncEntry = try entities.entry(change.entity)
            guard try inScope(change, syncEntry, scopes, in: context) else {
                outcomes[index] = .init(
                    sequence: entry.sequence, entity: change.entity, key: change.key, kind: .rejected,
                    current: SyncChange(entity: change.entity, key: change.key, values: nil, version: 0),
                    reason: "the record is outside the client's scopes")
                continue
            }
            do {
                outcomes[index] = try context.savepoint {
                    try settle(
                        entry, syncEntry, policy: policies[change.entity] ?? .serverWins, version: version,
                        in: context)
                }
            } catch let error as PersistenceError where Self.refusesOneChange(error) {
                // The change breaks a rule of the store (a reference, a unique index, a deny rule): only it is
                // refused, and the client takes the server's state.
                let stored = try context.syncedRecord(syncEntry, key: change.key)
                outcomes[index] = .init(
                    sequence: entry.sequence, entity: change.entity, key: change.key, kind: .rejected,
                    current: SyncChange(
                        entity: change.entity, key: change.key, values: stored.map(SyncChange.values(of:)),
                        version: try loggedVersion(of: change, in: context)),
                    reason: "the server's store refused it: \(error.message)")
            }
        }
        if let last = push.entries.map(\.sequence).max(), last > applied {
            _ = try context.internalRows(
                """
                INSERT INTO \(clients) (client_id, last_sequence, seen_at) VALUES ($1, $2, pg_catalog.now())
                ON CONFLICT (client_id) DO UPDATE SET last_sequence = excluded.last_sequence, seen_at = excluded.seen_at
                """, [.text(push.clientID), .integer(last)])
        }
        return SyncPushResult(outcomes: push.entries.indices.compactMap { outcomes[$0] })
    }

    /// Applies one pushed change, or settles its conflict.
    private static func settle(
        _ entry: SyncPush.Entry, _ syncEntry: SyncedEntities.Entry, policy: ConflictPolicy, version: Int64,
        in context: PostgresContext
    ) throws -> SyncPushResult.Outcome {
        let change = entry.change
        let layout = syncEntry.layout
        let incoming = try change.record(of: layout)
        let serverVersion = try loggedVersion(of: change, in: context)
        let outcome = { (kind: SyncPushResult.Kind, current: SyncChange, reason: String?) in
            SyncPushResult.Outcome(
                sequence: entry.sequence, entity: change.entity, key: change.key, kind: kind, current: current,
                reason: reason)
        }
        let stored = try context.syncedRecord(syncEntry, key: change.key)
        let store = { (record: Record?) throws -> SyncChange in
            try context.storeSynced(syncEntry, key: change.key, record: record, exists: stored != nil)
            return SyncChange(
                entity: change.entity, key: change.key, values: record.map(SyncChange.values(of:)), version: version)
        }
        let serverState = SyncChange(
            entity: change.entity, key: change.key, values: stored.map(SyncChange.values(of:)), version: serverVersion)
        // Already the server's state (both sides deleted it, or made the same change): nothing to write or settle.
        if stored == incoming { return outcome(.applied, serverState, nil) }
        // Made on the server's current version; or a record the client never had and the server doesn't hold now
        // (created anew after a deletion the client never saw): no conflict.
        guard serverVersion != change.version, change.version != 0 || stored != nil else {
            return outcome(.applied, try store(incoming), nil)
        }
        switch policy.rule {
        case .clientWins:
            return outcome(.applied, try store(incoming), nil)
        case .serverWins:
            return outcome(.rejected, serverState, "the record changed on the server since the client saw it")
        case .newestStamp:
            if let incoming, let stored, let stamp = layout.stampIndex,
                !incoming.values[stamp].isNull,
                stored.values[stamp].isNull
                    || Value.compare(incoming.values[stamp], stored.values[stamp]) == .orderedDescending
            {
                return outcome(.applied, try store(incoming), nil)
            }
            return outcome(
                .rejected, serverState,
                incoming == nil || stored == nil
                    ? "the record was changed and deleted on different sides: the server's state stays"
                    : "the server's record has a stamp as new or newer")
        case .merge(let merge):
            let merged = try merge(stored, incoming)
            if let merged, merged.layout.entity.name != layout.entity.name || merged.primaryKey != change.key {
                throw PersistenceError(
                    .invalidValue, "a merge of a \(change.entity) record returned another record")
            }
            // A merge that kept what was pushed stored it as pushed: nothing for the client to hear of.
            if merged == incoming { return outcome(.applied, try store(merged), nil) }
            let reason =
                switch (incoming, merged) {
                case (nil, .some): "the merge policy kept the record the client deleted"
                case (.some, nil): "the merge policy deleted the record"
                default: "the merge policy stored other values than the client's"
                }
            return outcome(.merged, try store(merged), reason)
        }
    }

    /// Whether `error` refuses one pushed change for a rule of the store's, rather than the whole push.
    private static func refusesOneChange(_ error: PersistenceError) -> Bool {
        [.referenceNotFound, .deleteDenied, .uniqueViolation, .duplicateKey, .constraintViolation].contains(error.code)
    }

    /// Whether the client may write the change: its entity is in the client's scopes, and the record is in them both
    /// as the server holds it and as the change leaves it.
    private static func inScope(
        _ change: SyncChange, _ entry: SyncedEntities.Entry, _ scopes: ResolvedScopes, in context: PostgresContext
    ) throws -> Bool {
        guard case .some(let condition) = scopes.condition(for: change.entity) else { return false }
        guard let condition else { return true }
        let resolved = try condition.resolve(in: entry.layout)
        if let incoming = try change.record(of: entry.layout), !resolved.matches(incoming.values) { return false }
        if let stored = try context.syncedRecord(entry, key: change.key), !resolved.matches(stored.values) {
            return false
        }
        return true
    }

    /// The version the change log holds for `change`'s record; 0 when it holds none (never written).
    private static func loggedVersion(of change: SyncChange, in context: PostgresContext) throws -> Int64 {
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
