/// What the transaction driver asks of a backend's context (``StoreContext`` is one). Public so that the context can
/// adopt it; its requirements are backend SPI.
public protocol TransactionContext: AnyObject {
    /// Ends the context's use: every later call throws ``PersistenceError/Code/contextExpired``.
    @_spi(PersistenceBackend) func expire()
    /// The backend's last checks and writes after the user's block returned, before the transaction commits (a read
    /// transaction's too). Throwing rolls the transaction back.
    @_spi(PersistenceBackend) func prepareCommit() throws
}

/// What every backend's context holds besides its storage and stays fixed for its transaction: whether it may write,
/// the write's change recorder, instrumentation, and the cancellation flag of the async call it runs for.
///
/// A context keeps it as a `let` (its fields are read in place, never copied whole) and keeps beside it, as its own
/// unchecked-exclusivity `var`s, what changes: whether its block ended (``refusal(writing:expired:)``) and its
/// reused record coders.
package struct ContextState {
    /// Whether the context belongs to a write transaction.
    package let isWritable: Bool
    /// What this write changed, for observers; `nil` in a read.
    package let recorder: ChangeRecorder?
    package let instrumentation: Instrumentation
    /// The cancellation flag of the async call this transaction runs for, if any.
    package let cancellation = CancellationFlag.current

    /// A context's state; it may write when it has a change recorder.
    package init(recorder: ChangeRecorder?, instrumentation: Instrumentation) {
        self.recorder = recorder
        self.instrumentation = instrumentation
        isWritable = recorder != nil
    }

    /// Why a context may not be used (`expired`: its block ended) for this: ``PersistenceError/Code/contextExpired``
    /// after its block ended, ``PersistenceError/Code/readOnly`` for a write in a read transaction. Each context checks
    /// `!expired && (!writing || isWritable)` itself, in its own module: a call here for every operation would cost
    /// more than the check.
    package func refusal(writing: Bool, expired: Bool) -> PersistenceError {
        expired
            ? PersistenceError(.contextExpired, "a context was used after its transaction block ended")
            : PersistenceError(.readOnly, "a read transaction can't change the database")
    }
}
