import Foundation
import PersistenceCore
import PersistencePostgres
public import PersistenceSync

extension SyncServer {
    /// One page of the changes since the request's cursor, in the log's order, read in one snapshot: each record's
    /// current state (deleted ones as deletions) and version.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` for a page size below 1; what the store throws.
    public func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        guard request.limit > 0 else {
            throw PersistenceError(.invalidArgument, "a pull's page size must be positive")
        }
        let entities = self.entities
        return try await database.read { context in
            try Self.page(request, in: context, entities: entities)
        }
    }

    private static func page(
        _ request: SyncPullRequest, in context: PostgresContext, entities: SyncedEntities
    ) throws -> SyncPullPage {
        // Every transaction with a lower id has ended: the next pull starts here.
        guard
            case .integer(let horizon)? = try context.internalRows(
                "SELECT pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot())::text::bigint"
            ).first?.values.first
        else {
            throw PersistenceError(.backend, "the server gave no snapshot horizon")
        }
        let after = request.after ?? SyncPosition(version: request.cursor, entity: "", key: Data())
        let rows = try context.internalRows(
            """
            SELECT entity, key, version, deleted FROM \(qualified(context, SyncLog.table))
            WHERE version >= $1 AND (version, entity, key) > ($2, $3, $4)
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
            // A table of the store the model no longer has: its records aren't synced.
            let entry = try? entities.entry(name)
            let key = try entry.map { try SyncLog.key(bytes, of: $0.layout) } ?? .blob(bytes)
            logged.append((entry, name, key, bytes, version, deleted != 0))
        }
        var records: [String: [Value: Record]] = [:]
        for (name, group) in Dictionary(grouping: logged.filter { !$0.deleted && $0.entity != nil }, by: \.name) {
            guard let entry = group.first?.entity else { continue }
            records[name] = try context.syncedRecords(entry, keys: group.map(\.key))
        }
        let changes = logged.compactMap { item -> SyncChange? in
            guard item.entity != nil else { return nil }
            let record = item.deleted ? nil : records[item.name]?[item.key]
            return SyncChange(
                entity: item.name, key: item.key, values: record.map(SyncChange.values(of:)), version: item.version)
        }
        let next =
            rows.count < request.limit
            ? nil
            : logged.last.map {
                SyncPosition(version: $0.version, entity: $0.name, key: $0.bytes)
            }
        return SyncPullPage(changes: changes, next: next, cursor: horizon)
    }
}
