/// How a write transaction treats what it changes: `Database.write(options:_:)`, sync and async.
public struct WriteOptions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The write applies changes that came from elsewhere — a sync server's (`PersistenceSync` writes so) — rather
    /// than the app's own:
    /// - a synced store's journal doesn't note them as local changes to push back;
    /// - a to-one reference to a record that isn't stored is written and reported to the write's hooks rather than
    ///   refused with ``PersistenceError/Code/referenceNotFound``: pages of changes arrive in the server's order, so
    ///   a record may come before the one it refers to.
    ///
    /// Everything else is as in any write: delete rules, unique indexes, observers, atomicity.
    public static let appliesRemoteChanges = WriteOptions(rawValue: 1 << 0)
}

/// A feature's part in every write transaction of a store, carried by the store's ``Model`` (``Model/adding(_:)``):
/// sync's journal is one. It runs inside the write's own transaction, after the user's block returned and before the
/// storage's last checks and the commit — what it writes commits or rolls back with the write, and what it throws
/// rolls the write back. It runs in every write transaction of the store, whatever it changed (nothing, too).
///
/// A write of a store with hooks records the primary key of each record it changes (``ChangeRecorder/recordsKeys``).
@_spi(PersistenceBackend) public protocol WillCommitHook: Sendable {
    /// Called once per write transaction with what it changed so far (``ChangeRecorder/changedKeys()``) and its
    /// options.
    func willCommit(_ changes: ChangeRecorder, in context: some DatabaseContext) throws
}

extension Model {
    /// This model with `hook` run before every write transaction of its stores commits (``WillCommitHook``).
    package func adding(_ hook: any WillCommitHook) -> Model {
        var model = self
        model.hooks.append(hook)
        return model
    }
}
