/// What comparing a client's synced content with the server's found (``SyncClient/verifyConvergence(syncingFirst:)``):
/// each synced entity's records hashed on both sides, by the backend-neutral content hash.
///
/// ```swift
/// let convergence = try await client.verifyConvergence()
/// if !convergence.isConverged { log.error("differs from the server: \(convergence.differingEntities)") }
/// ```
public struct SyncConvergence: Sendable, Hashable {
    /// An entity whose records differ between the client and the server.
    public struct Difference: Sendable, Hashable {
        /// The entity's name.
        public var entity: String
        /// How many records of it the client holds.
        public var localRecords: Int
        /// How many of its records in the client's scopes the server holds.
        public var serverRecords: Int
        /// The client's digest of them.
        public var localDigest: String
        /// The server's digest of them.
        public var serverDigest: String
    }

    /// Every synced entity's digest on the client, by entity name in UTF-8 byte order.
    public var entities: [SyncEntityDigest]
    /// The entities whose records differ, by name.
    public var differences: [Difference]
    /// How many local records had changes not yet pushed when the client's content was hashed: their entities
    /// differ until a push.
    public var pendingChanges: Int

    /// Whether the client holds exactly the server's records of its scopes, value for value.
    public var isConverged: Bool { differences.isEmpty }

    /// The names of the entities whose records differ.
    public var differingEntities: [String] { differences.map(\.entity) }

    /// Compares the client's digests with the server's.
    package init(local: [SyncEntityDigest], server: [SyncEntityDigest], pendingChanges: Int) {
        entities = local
        self.pendingChanges = pendingChanges
        let serverByName = Dictionary(server.map { ($0.entity, $0) }, uniquingKeysWith: { first, _ in first })
        let localByName = Dictionary(local.map { ($0.entity, $0) }, uniquingKeysWith: { first, _ in first })
        let names = Set(serverByName.keys).union(localByName.keys).sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
        }
        differences = names.compactMap { name in
            let local = localByName[name]
            let server = serverByName[name]
            guard local?.digest != server?.digest else { return nil }
            return Difference(
                entity: name, localRecords: local?.records ?? 0, serverRecords: server?.records ?? 0,
                localDigest: local?.digest ?? "none", serverDigest: server?.digest ?? "none")
        }
    }
}
