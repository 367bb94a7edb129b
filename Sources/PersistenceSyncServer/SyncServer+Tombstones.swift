import PersistenceCore
import PersistencePostgres

extension SyncServer {
    /// Forgets the deletions logged longer ago than `age`: a client whose cursor is older than one of them, and that
    /// last pulled before this purge, is told to sync its scopes whole again (`resyncRequired`; `SyncClient` does so by
    /// itself), since their pull could no longer hand them those deletions.
    ///
    /// Run it now and then (a daily job): the log keeps one row per record ever written until then.
    /// - Parameter age: How long deletions are kept at least; a client offline for longer resyncs.
    /// - Returns: How many deletions were forgotten.
    @discardableResult
    public func purgeTombstones(olderThan age: Duration) async throws -> Int {
        let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
        guard seconds >= 0 else { throw PersistenceError(.invalidArgument, "a retention can't be negative") }
        return try await database.write(retrying: collisionRetries) { context in
            let rows = try context.internalRows(
                """
                WITH purged AS (DELETE FROM \(Self.qualified(context, SyncLog.table))
                    WHERE deleted AND changed_at < pg_catalog.now() - $1 * interval '1 second' RETURNING version)
                SELECT count(*)::bigint, coalesce(max(version), 0)::bigint FROM purged
                """, [.real(seconds)])
            guard let row = rows.first, case .integer(let count) = row[0], case .integer(let newest) = row[1] else {
                throw PersistenceError(.backend, "the server didn't say what it purged")
            }
            if count > 0 {
                let purges = Self.qualified(context, SyncLog.purgedTable)
                _ = try context.internalRows(
                    "INSERT INTO \(purges) (epoch, version) SELECT coalesce(max(epoch), 0) + 1, $1 FROM \(purges)",
                    [.integer(newest)])
            }
            return Int(count)
        }
    }
}
