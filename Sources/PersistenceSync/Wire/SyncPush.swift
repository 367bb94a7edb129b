public import PersistenceCore

/// What a client pushes: the local changes of whole outbox sequences (one sequence per local write transaction), in
/// sequence order.
public struct SyncPush: Sendable, Hashable, Codable {
    /// One pushed change and the outbox sequence of the local write that made it.
    public struct Entry: Sendable, Hashable, Codable {
        /// The outbox sequence: the server applies each client's sequences once, in order.
        public var sequence: Int64
        /// The record's state on the client; its version is the server's version the client last saw.
        public var change: SyncChange

        /// Creates an entry.
        public init(sequence: Int64, change: SyncChange) {
            self.sequence = sequence
            self.change = change
        }
    }

    /// The pushing client's id.
    public var clientID: String
    /// The version of the client's model.
    public var modelVersion: Int
    /// The changes, in sequence order; a batch holds every change of each sequence it holds.
    public var entries: [Entry]
    /// The scopes the client syncs: it may change only records in them; `nil` for the whole store.
    public var scopes: [SyncScope]?

    /// Creates a push.
    public init(clientID: String, modelVersion: Int, entries: [Entry], scopes: [SyncScope]? = nil) {
        self.clientID = clientID
        self.modelVersion = modelVersion
        self.entries = entries
        self.scopes = scopes
    }
}

/// What the server did with a pushed batch, entry by entry.
public struct SyncPushResult: Sendable, Hashable, Codable {
    /// What became of one pushed change.
    public struct Outcome: Sendable, Hashable, Codable {
        /// The entry's outbox sequence.
        public var sequence: Int64
        /// The entry's entity.
        public var entity: String
        /// The entry's record key.
        public var key: Value
        /// What the server did.
        public var kind: Kind
        /// The record as the server now holds it (its version is the record's new server version): the pushed state
        /// when applied, the merged one, or the server's own when rejected.
        public var current: SyncChange
        /// Why the change was rejected or merged; `nil` when it was applied as pushed.
        public var reason: String?

        /// Creates an outcome.
        public init(sequence: Int64, entity: String, key: Value, kind: Kind, current: SyncChange, reason: String?) {
            self.sequence = sequence
            self.entity = entity
            self.key = key
            self.kind = kind
            self.current = current
            self.reason = reason
        }
    }

    /// What the server did with a pushed change.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Stored as pushed.
        case applied
        /// Stored merged with the server's state by the entity's merge policy, as something else than what was pushed
        /// (a merge that returns the pushed state is `applied`); the client reports it as a `SyncRejection` of kind
        /// `merged`.
        case merged
        /// Not stored: the entity's conflict policy kept the server's state, or the record is outside the client's
        /// scopes (then its current state is a deletion: the client doesn't hold it).
        case rejected
        /// Applied by an earlier push of the same sequence (a retry): nothing done again.
        case alreadyApplied
    }

    /// The outcomes, one per pushed entry, in the batch's order.
    public var outcomes: [Outcome]

    /// Creates a result.
    public init(outcomes: [Outcome]) { self.outcomes = outcomes }
}
