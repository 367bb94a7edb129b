public import Foundation
import PersistenceCore

/// What a client asks to pull: the server's changes since its cursor, a page at a time.
public struct SyncPullRequest: Sendable, Hashable, Codable {
    /// The pulling client's id.
    public var clientID: String
    /// The version of the client's model.
    public var modelVersion: Int
    /// The cursor the client has pulled up to (0: from the start).
    public var cursor: Int64
    /// Where the previous page of this pull ended; `nil` for the first page.
    public var after: SyncPosition?
    /// The most changes in one page.
    public var limit: Int
    /// The scopes whose records the client syncs; `nil` for the whole store (a trusted client's).
    public var scopes: [SyncScope]?
    /// The server's tombstone purge the client's cursor dates from (``SyncPullPage/purgeEpoch`` of its last pull).
    public var purgeEpoch: Int64
    /// Whether to send only the records in the scopes now (a new scope's, a resync's first pull), rather than every
    /// change since the cursor, deletions and records that left the scopes included.
    public var isSnapshot: Bool
    /// Whether to count the changes from this page to the pull's end (``SyncPullPage/remaining``): a client asks on
    /// the first page it requests, for its progress. `nil` (an older client's request): no.
    public var countsRemaining: Bool?

    /// Creates a request.
    public init(
        clientID: String, modelVersion: Int, cursor: Int64, after: SyncPosition?, limit: Int,
        scopes: [SyncScope]? = nil, isSnapshot: Bool = false, purgeEpoch: Int64 = 0, countsRemaining: Bool? = nil
    ) {
        self.countsRemaining = countsRemaining
        self.purgeEpoch = purgeEpoch
        self.clientID = clientID
        self.modelVersion = modelVersion
        self.cursor = cursor
        self.after = after
        self.limit = limit
        self.scopes = scopes
        self.isSnapshot = isSnapshot
    }
}

/// Where a page of a pull ended, in the server's change order (opaque to clients).
public struct SyncPosition: Sendable, Hashable, Codable {
    /// The server version of the page's last change.
    public var version: Int64
    /// Its entity.
    public var entity: String
    /// Its key, as the server orders keys.
    public var key: Data

    /// Creates a position.
    public init(version: Int64, entity: String, key: Data) {
        self.version = version
        self.entity = entity
        self.key = key
    }
}

/// One page of pulled changes.
public struct SyncPullPage: Sendable, Hashable, Codable {
    /// The server's current state of each record changed since the cursor, deletions included (a record that left the
    /// client's scopes comes as a deletion).
    public var changes: [SyncChange]
    /// Where to ask for the next page; `nil` when this is the last one.
    public var next: SyncPosition?
    /// The cursor a client keeps once it applied every page of the pull: every change after it is in a later pull.
    public var cursor: Int64
    /// How many times the server had purged tombstones when it read the page: a later pull whose cursor is older
    /// than a tombstone purged since is told to resync.
    public var purgeEpoch: Int64
    /// When the request asked (``SyncPullRequest/countsRemaining``): how many changes the pull has from this page's
    /// first on, as of the page's snapshot — at most that many: the count doesn't apply the scopes' conditions, only
    /// their entities. `nil` otherwise.
    public var remaining: Int?

    /// Creates a page.
    public init(
        changes: [SyncChange], next: SyncPosition?, cursor: Int64, purgeEpoch: Int64 = 0, remaining: Int? = nil
    ) {
        self.remaining = remaining
        self.changes = changes
        self.next = next
        self.cursor = cursor
        self.purgeEpoch = purgeEpoch
    }
}
