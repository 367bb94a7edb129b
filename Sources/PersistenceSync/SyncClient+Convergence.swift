@_spi(PersistenceBackend) import PersistenceCore

/// Proving convergence: the client's synced content against the server's, entity by entity.
extension SyncClient {
    /// Compares every synced entity's records in the store with the server's records of the client's scopes, by the
    /// backend-neutral content hash (the store tool's `persistence hash`, entity by entity), and names the entities
    /// that differ.
    ///
    /// Each side hashes its records one at a time in primary-key order, in one snapshot of its store: memory doesn't
    /// grow with the data, and only the digests cross the network.
    ///
    /// - Parameter syncingFirst: Whether to sync first (the default), so that a difference means the two sides
    ///   diverged rather than that changes are still on their way. A difference after a sync is checked again after
    ///   another sync, twice at most — writes that land on either side between the sync and the comparison differ
    ///   only until the next one. With `false`, the sides are compared as they are, once.
    /// - Returns: The entities that differ, with both sides' record counts and digests, and how many local records
    ///   had changes not yet pushed when the store was hashed.
    /// - Throws: What ``sync()`` throws; `invalidConfiguration` for a transport that can't fetch the server's
    ///   digests; `unauthorized`, `updateRequired` as a pull would.
    public func verifyConvergence(syncingFirst: Bool = true) async throws -> SyncConvergence {
        var attempts = syncingFirst ? 3 : 1
        while true {
            if syncingFirst { try await sync() }
            let convergence = try await gate.serialized { try await self.compareWithServer() }
            attempts -= 1
            if convergence.isConverged || attempts == 0 { return convergence }
        }
    }

    /// One comparison: the server's digests, then the store's.
    private func compareWithServer() async throws -> SyncConvergence {
        let client = try await clientState()
        let server = try await transport.digest(
            SyncDigestRequest(clientID: client.clientID, modelVersion: entities.model.version, scopes: scopes))
        let entities = self.entities
        let (local, pending) = try await database.read { context in
            let digests = try entities.byName.map { entry in
                try SyncEntityDigest.of(entry.layout) { try context.forEachSyncedRecord(entry, $0) }
            }
            return (digests, try context.count(SyncRecordState.self, where: Field("isPending") == true))
        }
        return SyncConvergence(local: local, server: server.entities, pendingChanges: pending)
    }
}
