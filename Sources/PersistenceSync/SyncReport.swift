public import PersistenceCore

/// What one sync did.
public struct SyncReport: Sendable, Hashable {
    /// How many local record changes were pushed.
    public var pushed = 0
    /// How many server changes were pulled (those to records with unpushed local changes included, though not
    /// applied).
    public var pulled = 0
    /// The pushed changes the server didn't keep as pushed, and local changes a pulled deletion removed.
    public var rejections: [SyncRejection] = []
    /// Whether another process was syncing the store, so this sync did nothing (that process pushes this one's
    /// writes: they are in the store's journal).
    public var syncedElsewhere = false

    /// An empty report.
    public init() {}
}

/// A local change the server didn't keep: the record's conflict policy kept the server's state (newer stamp, server
/// wins). The local store then holds the server's state, unless the record changed again locally since the push.
public struct SyncRejection: Sendable, Hashable {
    /// The record's entity.
    public var entity: String
    /// The record's primary key.
    public var key: Value
    /// Why, as the server says.
    public var reason: String
    /// The record as the server holds it.
    public var serverState: SyncChange
    /// The outbox sequence of the local write whose change this was.
    public var sequence: Int64

    /// Creates a rejection.
    public init(entity: String, key: Value, reason: String, serverState: SyncChange, sequence: Int64) {
        self.entity = entity
        self.key = key
        self.reason = reason
        self.serverState = serverState
        self.sequence = sequence
    }
}
