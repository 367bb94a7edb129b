public import PersistenceSync

/// The direct PostgreSQL transport: a client that reaches the store itself, running the sync server's work in its
/// own process (trusted clients — internal tools, server-side replicas, tests).
public struct DirectSyncTransport: SyncTransport {
    /// The sync server of the PostgreSQL store.
    public let server: SyncServer
    /// What the client may sync: everything unless told otherwise.
    public let access: SyncAccess

    /// A transport to `server` for a client that may sync what `access` permits.
    public init(server: SyncServer, access: SyncAccess = .everything) {
        self.server = server
        self.access = access
    }

    public func push(_ push: SyncPush) async throws -> SyncPushResult { try await server.push(push, access: access) }

    public func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        try await server.pull(request, access: access)
    }

    public func digest(_ request: SyncDigestRequest) async throws -> SyncDigest {
        try await server.digest(request, access: access)
    }
}

extension SyncServer {
    /// A direct transport to this server, for clients in the same process.
    public var directTransport: DirectSyncTransport { DirectSyncTransport(server: self) }
}
