public import PersistenceCore

/// How the sync server settles a pushed change to a record that changed on the server since the client last saw it.
///
/// A change made on a base the server still has is always applied, and so is one that leaves the record as the server
/// holds it, or creates a record the client never had where the server holds none: a policy decides only real
/// conflicts.
public struct ConflictPolicy: Sendable {
    enum Rule: Sendable {
        case newestStamp, serverWins, clientWins
        case merge(@Sendable (_ server: Record?, _ client: Record?) throws -> Record?)
    }

    let rule: Rule

    /// The record with the newer stamp wins (the entity's stamp attribute, as `upsert` and `reconcile` compare it): a
    /// pushed record whose stamp is strictly newer than the server's is applied, any other is rejected. A deletion
    /// on either side carries no stamp: the server's state stays (the client's change is rejected).
    public static let newestStamp = ConflictPolicy(rule: .newestStamp)
    /// The server's state stays; the client's change is rejected and the client takes the server's state.
    public static let serverWins = ConflictPolicy(rule: .serverWins)
    /// The client's change is applied whatever the server holds.
    public static let clientWins = ConflictPolicy(rule: .clientWins)

    /// `merge` decides the record's state from the server's and the client's (`nil`: deleted on that side); it
    /// returns `nil` to delete the record. Its result is stored and sent back to the client, which reports it (a
    /// `SyncRejection` of kind `merged`, in the sync's report and on its `rejections`) unless it is what was pushed.
    ///
    /// It runs on the server inside the push's transaction: a pure function of its arguments (it may run again when
    /// the transaction collides with another and is retried; only the last run's result is stored).
    public static func merge(_ merge: @escaping @Sendable (_ server: Record?, _ client: Record?) throws -> Record?)
        -> ConflictPolicy
    {
        ConflictPolicy(rule: .merge(merge))
    }
}
