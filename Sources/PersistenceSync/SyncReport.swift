public import PersistenceCore

/// What one sync did.
public struct SyncReport: Sendable, Hashable {
    /// How many local record changes were pushed.
    public var pushed = 0
    /// How many server changes were pulled (those to records with unpushed local changes included, though not
    /// applied). A pull that an earlier sync began and didn't finish goes on where it stopped: only the rest counts.
    public var pulled = 0
    /// Every pushed change the server didn't keep as pushed — rejected or stored merged (``SyncRejection/kind``) —
    /// and the local changes a pulled deletion removed.
    public var rejections: [SyncRejection] = []
    /// Whether the pull resynced: it pulled the client's scopes whole again and removed the local records without
    /// unpushed changes that it didn't bring — because the server purged deletions the client hadn't pulled yet (it
    /// was offline for longer than the server keeps them) or a scope was dropped. A store's first sync isn't a resync.
    public var resynced = false
    /// Whether another process was syncing the store, so this sync did nothing (that process pushes this one's
    /// writes: they are in the store's journal).
    public var syncedElsewhere = false

    /// An empty report.
    public init() {}
}

/// A local change the server didn't keep as pushed: the record's conflict policy kept the server's state (newer
/// stamp, server wins) or stored a merge of both; or a pulled deletion removed it. The local store then holds the
/// server's state, unless the record changed again locally since the push.
///
/// ```swift
/// for rejection in report.rejections where rejection.kind == .merged {
///     print("stored as", rejection.serverState.values ?? [:])   // nil values: the merge deleted the record
/// }
/// ```
public struct SyncRejection: Sendable, Hashable {
    /// What became of the local change.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Not stored: the server's state stayed (its conflict policy kept it, the record is outside the client's
        /// scopes, or the change broke a rule of the server's store).
        case rejected
        /// Stored merged with the server's state by the entity's merge policy
        /// (``SyncRejection/serverState`` is what was stored): other values, or a deletion undone or made.
        case merged
        /// Removed locally before it was pushed: the server deleted the record it belongs to, and a cascade delete
        /// rule deleted it with that record.
        case deletedByCascade
    }

    /// The record's entity.
    public var entity: String
    /// The record's primary key.
    public var key: Value
    /// What became of the change.
    public var kind: Kind
    /// Why, as the server says.
    public var reason: String
    /// The record as the server holds it (a merge's result when ``kind`` is `merged`; no values: deleted).
    public var serverState: SyncChange
    /// The outbox sequence of the local write whose change this was.
    public var sequence: Int64

    /// Creates a rejection.
    public init(
        entity: String, key: Value, reason: String, serverState: SyncChange, sequence: Int64, kind: Kind = .rejected
    ) {
        self.entity = entity
        self.key = key
        self.kind = kind
        self.reason = reason
        self.serverState = serverState
        self.sequence = sequence
    }
}
