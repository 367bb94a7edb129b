import Foundation
import PersistenceCore
import PersistencePostgres
public import PersistenceSync

extension SyncServer {
    /// One page of the changes since the request's cursor, in the log's order, read in one snapshot: each record's
    /// current state (deleted ones as deletions) and version.
    ///
    /// Only records of the request's scopes are sent; a changed record of a synced entity that isn't in them (any
    /// more) comes as a deletion. A snapshot request (`SyncPullRequest.isSnapshot`) gets only the records in the
    /// scopes now, no deletions.
    /// - Parameters:
    ///   - request: The client's request.
    ///   - access: What the client may sync (see ``push(_:access:)``).
    /// - Throws: `invalidArgument` for a page size below 1;
    ///   `unauthorized`; `updateRequired`;
    ///   `resyncRequired` when tombstones since the cursor were purged; what the store throws.
    public func pull(_ request: SyncPullRequest, access: SyncAccess = .everything) async throws -> SyncPullPage {
        guard request.limit > 0 else {
            throw PersistenceError(.invalidArgument, "a pull's page size must be positive")
        }
        try checkModelVersion(request.modelVersion)
        let scopes = try ResolvedScopes(request.scopes, access: access, definitions: self.scopes)
        let entities = self.entities
        return try await database.read { context in
            try Self.page(request, in: context, entities: entities, scopes: scopes)
        }
    }

    private static func page(
        _ request: SyncPullRequest, in context: PostgresContext, entities: SyncedEntities, scopes: ResolvedScopes
    ) throws -> SyncPullPage {
        let purges = qualified(context, SyncLog.purgedTable)
        // A purge since the client's last pull that removed a deletion it hasn't pulled yet.
        if !request.isSnapshot,
            !(try context.internalRows(
                "SELECT 1 FROM \(purges) WHERE epoch > $1 AND version >= $2 LIMIT 1",
                [.integer(request.purgeEpoch), .integer(request.cursor)]
            ).isEmpty)
        {
            throw PersistenceError(
                .resyncRequired, "deletions since the client's last pull are no longer kept: it syncs whole again")
        }
        // Every transaction with a lower id than the horizon has ended: the next pull starts there. One round trip for
        // it and the number of the last purge.
        guard
            let row = try context.internalRows(
                """
                SELECT pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot())::text::bigint,
                    (SELECT coalesce(max(epoch), 0)::bigint FROM \(purges))
                """
            ).first, case .integer(let horizon) = row[0], case .integer(let purgeEpoch) = row[1]
        else {
            throw PersistenceError(.backend, "the server gave no snapshot horizon")
        }
        let after = request.after ?? SyncPosition(version: request.cursor, entity: "", key: Data())
        let remaining =
            try request.countsRemaining == true
            ? count(request, from: after, in: context, entities: entities, scopes: scopes) : nil
        let rows = try context.internalRows(
            """
            SELECT entity, key, version, deleted FROM \(qualified(context, SyncLog.table))
            WHERE version >= $1 AND (version, entity, key) > ($2, $3, $4)\(request.isSnapshot ? " AND NOT deleted" : "")
            ORDER BY version, entity, key LIMIT $5
            """,
            [
                .integer(request.cursor), .integer(after.version), .text(after.entity), .blob(after.key),
                .integer(Int64(request.limit)),
            ])
        var logged:
            [(entity: SyncedEntities.Entry?, name: String, key: Value, bytes: Data, version: Int64, deleted: Bool)] =
                []
        for row in rows {
            guard case .text(let name) = row[0], case .blob(let bytes) = row[1], case .integer(let version) = row[2],
                case .integer(let deleted) = row[3]
            else { throw PersistenceError(.corrupt, "the sync log holds a malformed row") }
            // A table of the store the model no longer has, or an entity outside the scopes: not synced.
            let entry = scopes.condition(for: name) == nil ? nil : try? entities.entry(name)
            let key = try entry.map { try SyncLog.key(bytes, of: $0.layout) } ?? .blob(bytes)
            logged.append((entry, name, key, bytes, version, deleted != 0))
        }
        var records: [String: [Value: Record]] = [:]
        for (name, group) in Dictionary(grouping: logged.filter { !$0.deleted && $0.entity != nil }, by: \.name) {
            guard let entry = group.first?.entity else { continue }
            guard case .some(let condition) = scopes.condition(for: name) else { continue }
            records[name] = try context.syncedRecords(entry, keys: group.map(\.key), where: condition)
        }
        let changes = logged.compactMap { item -> SyncChange? in
            guard item.entity != nil else { return nil }
            let record = item.deleted ? nil : records[item.name]?[item.key]
            if request.isSnapshot && record == nil { return nil }
            return SyncChange(
                entity: item.name, key: item.key, values: record.map(SyncChange.values(of:)), version: item.version)
        }
        let next =
            rows.count < request.limit
            ? nil
            : logged.last.map {
                SyncPosition(version: $0.version, entity: $0.name, key: $0.bytes)
            }
        return SyncPullPage(
            changes: changes, next: next, cursor: horizon, purgeEpoch: purgeEpoch, remaining: remaining)
    }

    /// How many logged changes of the scopes' entities the pull has from `after` on (deleted ones left out of a
    /// snapshot), in the page's snapshot: one count over the log's order index.
    private static func count(
        _ request: SyncPullRequest, from after: SyncPosition, in context: PostgresContext, entities: SyncedEntities,
        scopes: ResolvedScopes
    ) throws -> Int {
        let names = entities.all.map(\.layout.entity.name).filter { scopes.condition(for: $0) != nil }
        guard !names.isEmpty else { return 0 }
        let list = names.indices.map { "$\($0 + 5)" }.joined(separator: ", ")
        guard
            case .integer(let count)? = try context.internalRows(
                """
                SELECT count(*)::bigint FROM \(qualified(context, SyncLog.table))
                WHERE version >= $1 AND (version, entity, key) > ($2, $3, $4) AND entity IN (\(list))\(
                    request.isSnapshot ? " AND NOT deleted" : "")
                """,
                [.integer(request.cursor), .integer(after.version), .text(after.entity), .blob(after.key)]
                    + names.map { .text($0) }
            ).first?.values.first
        else { throw PersistenceError(.backend, "the server gave no count") }
        return Int(count)
    }
}
