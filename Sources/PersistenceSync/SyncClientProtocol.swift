/// What every ``SyncClient`` offers whatever its store's backend: clients of SQLite, LMDB and encrypted LMDB stores
/// held side by side (`[any SyncClientProtocol]`), or passed to code that shouldn't know the backend.
///
/// ```swift
/// let clients: [any SyncClientProtocol] = [notesClient, photosClient]  // a SQLite store's, an LMDB store's
/// for client in clients { try await client.sync() }
/// ```
public protocol SyncClientProtocol: AnyObject, Sendable {
    /// The scopes whose records the store holds; `nil` for the whole server store.
    var scopes: [SyncScope]? { get }
    /// Changes the scopes the store holds, from the next sync on (``SyncClient/subscribe(to:)``).
    func subscribe(to scopes: [SyncScope]?)
    /// Pushes every pending local change, then pulls every server change since the last pull
    /// (``SyncClient/sync()``).
    @discardableResult func sync() async throws -> SyncReport
    /// Pushes every pending local change, without pulling.
    @discardableResult func push() async throws -> SyncReport
    /// Pulls every server change since the last pull, without pushing.
    @discardableResult func pull() async throws -> SyncReport
    /// Syncs now and whenever local changes are pending or `interval` passed, until the task is cancelled
    /// (``SyncClient/run(every:)``).
    func run(every interval: Duration) async
    /// Wakes ``run(every:)`` to sync now.
    func syncNow()
    /// What the client is doing now.
    var status: SyncStatus { get }
    /// What the client is doing, as it changes (``SyncClient/statuses``).
    var statuses: AsyncStream<SyncStatus> { get }
    /// How far each pull has come (``SyncClient/progress``).
    var progress: AsyncStream<SyncProgress?> { get }
    /// The changes the server did not keep as pushed, as they come back (``SyncClient/rejections``).
    var rejections: AsyncStream<SyncRejection> { get }
    /// How many local records have changes not yet pushed and acknowledged.
    func pendingCount() async throws -> Int
    /// Compares the store's synced content with the server's and names the entities that differ
    /// (``SyncClient/verifyConvergence(syncingFirst:)``).
    func verifyConvergence(syncingFirst: Bool) async throws -> SyncConvergence
}

extension SyncClient: SyncClientProtocol {}
