@_spi(PersistenceBackend) public import PersistenceCore

/// The one lifecycle of every backend's transactions: instrumentation, change recording, the context's lifetime,
/// the cancellation check before a write commits, rollback on any error, and publishing what a write changed to
/// observers once it committed.
///
/// A backend supplies how a transaction begins, commits and rolls back — or, where its engine runs a transaction
/// around a closure (LMDB), that closure — and how to make a context. It calls the driver while it holds its writer
/// lock for writes, so that observers hear of commits in commit order — or, where writes run concurrently (a server's
/// pool), with ``ordersCommits`` set: then each commit takes a ticket from the ``ObservationHub`` just before it is
/// sent, and the hub passes publications on in ticket order.
///
/// **The user's block runs exactly once**: nothing here runs it again, whatever fails.
@_spi(PersistenceBackend) public struct TransactionDriver: Sendable {
    @usableFromInline package let instrumentation: Instrumentation
    @usableFromInline package let observationHub: ObservationHub
    /// Whether writes commit concurrently, so that publications must be put in commit order by tickets.
    @usableFromInline package let ordersCommits: Bool
    /// What runs in each write just before it commits: the model's hooks (``WillCommitHook``, sync's journal).
    @usableFromInline package let hooks: [any WillCommitHook]

    /// A driver that records through `instrumentation` and publishes commits to `observationHub`; `model`'s
    /// will-commit hooks run in every write. `ordersCommits` when writes commit concurrently (a server's pool).
    @_spi(PersistenceBackend) public init(
        instrumentation: Instrumentation, observationHub: ObservationHub, ordersCommits: Bool = false,
        model: Model? = nil
    ) {
        self.instrumentation = instrumentation
        self.observationHub = observationHub
        self.ordersCommits = ordersCommits
        // A model with full-text indexes keeps them in step in every write, after the features' hooks.
        hooks = (model?.hooks ?? []) + (model?.hasFullTextIndexes == true ? [FullTextIndexHook()] : [])
    }

    /// A write's change recorder: it records primary keys while someone observes change sets, and always in a store
    /// with hooks (sync's journal notes each changed record).
    @inlinable
    func recorder(writable: Bool, options: WriteOptions) -> ChangeRecorder? {
        writable
            ? ChangeRecorder(recordsKeys: !hooks.isEmpty || observationHub.recordsKeys, options: options) : nil
    }

    /// Runs `body` in one transaction that `transaction` begins, hands to its closure, and commits when the closure
    /// returns (rolling back when it throws).
    /// - Parameters:
    ///   - writable: Whether the transaction writes (records changes, checks cancellation before committing).
    ///   - options: A write's ``WriteOptions``.
    ///   - transaction: Runs its closure inside a transaction of the engine's: begins, calls it once, commits.
    ///   - context: Makes the context of the transaction, with the write's change recorder (`nil` in a read).
    @inlinable
    @_spi(PersistenceBackend) public func run<Handle, Context: TransactionContext & DatabaseContext, R>(
        writable: Bool,
        options: WriteOptions = [],
        in transaction: (_ inside: (Handle) throws -> R) throws -> R,
        context: (Handle, ChangeRecorder?) throws -> Context,
        _ body: (Context) throws -> R
    ) throws -> R {
        try instrumentation.transaction(writable: writable) {
            let recorder = recorder(writable: writable, options: options)
            // The engine's closure only runs these while `run` does: they never escape.
            let result = try withoutActuallyEscaping(context) { context in
                try withoutActuallyEscaping(body) { body in
                    try transaction { handle in
                        try inside(recorder, try context(handle, recorder), body)
                    }
                }
            }
            if let recorder { observationHub.publish(recorder) }
            return result
        }
    }

    /// Runs `body` in one transaction of an engine that begins, commits and rolls back by statements (SQLite,
    /// PostgreSQL): `begin`, then `body`, then `commit` — `rollback` after any error of either.
    @inlinable
    @_spi(PersistenceBackend) public func run<Context: TransactionContext & DatabaseContext, R>(
        writable: Bool,
        options: WriteOptions = [],
        begin: () throws -> Void,
        commit: () throws -> Void,
        rollback: () -> Void,
        context: (ChangeRecorder?) throws -> Context,
        _ body: (Context) throws -> R
    ) throws -> R {
        try instrumentation.transaction(writable: writable) {
            let recorder = recorder(writable: writable, options: options)
            try begin()
            let result: R
            do {
                result = try inside(recorder, try context(recorder), body)
            } catch {
                rollback()
                throw error
            }
            guard let recorder else {
                try commitOrRollBack(commit, rollback)
                return result
            }
            guard ordersCommits else {
                try commitOrRollBack(commit, rollback)
                observationHub.publish(recorder)
                return result
            }
            let ticket = observationHub.reserveTicket()
            do {
                try commitOrRollBack(commit, rollback)
            } catch {
                observationHub.publish(nil, ticket: ticket)
                throw error
            }
            observationHub.publish(recorder, ticket: ticket)
            return result
        }
    }

    /// Commits; rolls back when committing fails.
    @inlinable
    func commitOrRollBack(_ commit: () throws -> Void, _ rollback: () -> Void) throws {
        do {
            try commit()
        } catch {
            rollback()
            throw error
        }
    }

    /// The part of every transaction between begin and commit: the user's block, once, then the model's hooks
    /// (a synced store's journal), the backend's last checks and the cancellation check; the context expires whatever happens.
    @inlinable
    func inside<Context: TransactionContext & DatabaseContext, R>(
        _ recorder: ChangeRecorder?, _ context: Context, _ body: (Context) throws -> R
    ) throws -> R {
        defer { context.expire() }
        let result = try body(context)
        if let recorder {
            for hook in hooks { try hook.willCommit(recorder, in: context) }
        }
        try context.prepareCommit()
        // The last moment a cancelled task's write can still be rolled back: never commit it.
        if recorder != nil { try CancellationFlag.checkCurrent() }
        return result
    }
}
