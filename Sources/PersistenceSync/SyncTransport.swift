import PersistenceCore

/// How a sync client reaches its server: pushes local changes and pulls the server's.
///
/// `PersistenceSyncServer` has the direct PostgreSQL transport (for trusted clients: tools, server-side replicas,
/// tests).
///
/// A transport reports failures as `PersistenceError`s: `unreachable`,
/// `connectionLost` and `commitOutcomeUnknown` for a push whose outcome
/// is unknown (pushing the same batch again is safe: the server applies each outbox sequence once).
public protocol SyncTransport: Sendable {
    /// Sends local changes; the server applies the batch in one transaction.
    func push(_ push: SyncPush) async throws -> SyncPushResult
    /// Fetches one page of the server's changes.
    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage
    /// Fetches the server's digests of the client's synced content (``SyncClient/verifyConvergence(syncingFirst:)``).
    func digest(_ request: SyncDigestRequest) async throws -> SyncDigest
}

extension SyncTransport {
    /// A transport written before convergence checks: refuses them.
    /// - Throws: `invalidConfiguration`.
    public func digest(_ request: SyncDigestRequest) async throws -> SyncDigest {
        throw PersistenceError(.invalidConfiguration, "this sync transport can't compare content with its server")
    }
}
