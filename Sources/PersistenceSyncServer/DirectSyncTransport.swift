public import PersistenceSync

/// The direct PostgreSQL transport: a client that reaches the store itself, running the sync server's work in its
/// own process (trusted clients — internal tools, server-side replicas, tests).
public struct DirectSyncTransport: SyncTransport {
    /// The sync server of the PostgreSQL store.
    public let server: SyncServer

    /// A transport to `server`.
    public init(server: SyncServer) { self.server = server }

    public func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push) }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullPage { try await server.pull(request) }
}

extension SyncServer {
    /// A direct transport to this server, for clients in the same process.
    public var directTransport: DirectSyncTransport { DirectSyncTransport(server: self) }
}
