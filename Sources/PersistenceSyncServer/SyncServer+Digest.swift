@_spi(PersistenceBackend) import PersistenceCore
import PersistencePostgres
public import PersistenceSync

extension SyncServer {
    /// The digests of every synced entity's records in the request's scopes, read in one snapshot: what a client
    /// compares its own with to prove it holds what the server holds (`SyncClient.verifyConvergence(syncingFirst:)`).
    ///
    /// An entity outside the scopes hashes as holding no records. Each entity's records are read in primary-key order
    /// and hashed one at a time: memory doesn't grow with the store.
    /// - Parameters:
    ///   - request: The client's request.
    ///   - access: What the client may sync (see ``push(_:access:)``).
    /// - Throws: `unauthorized`; `updateRequired`; `invalidArgument` for a scope the server doesn't declare; what
    ///   the store throws.
    public func digest(_ request: SyncDigestRequest, access: SyncAccess = .everything) async throws -> SyncDigest {
        try checkModelVersion(request.modelVersion)
        let scopes = try ResolvedScopes(request.scopes, access: access, definitions: self.scopes)
        let entities = self.entities
        return try await database.read { context in
            try SyncDigest(
                entities: entities.byName.map { entry in
                    try SyncEntityDigest.of(entry.layout) { add in
                        guard case .some(let condition) = scopes.condition(for: entry.layout.entity.name) else {
                            return
                        }
                        try context.forEachSyncedRecord(entry, where: condition, add)
                    }
                })
        }
    }
}
