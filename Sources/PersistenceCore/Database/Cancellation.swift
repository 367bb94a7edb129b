import Foundation
import Synchronization
import Tracing

/// Whether the task that awaits a transaction has been cancelled, seen from the thread that runs it.
///
/// The async `read` and `write` run their blocks on dispatch queues, outside any task, so a block can't ask
/// `Task.isCancelled`. The transaction runner makes one flag per call, sets it from the task's cancellation
/// handler and makes it the running thread's ``current`` flag while the block runs; backends check it before a
/// write commits, and long loops (iteration, batches, reconcile, verification, migrations) check it between records.
@usableFromInline package final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)

    package init() {}

    /// Whether the awaiting task was cancelled.
    package var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Marks the awaiting task cancelled.
    package func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Throws `CancellationError` when the awaiting task was cancelled.
    @inline(__always)
    package func check() throws {
        if isCancelled { throw CancellationError() }
    }

    /// The flag of the async call the calling thread is working for, or `nil` (synchronous calls can't be
    /// cancelled).
    ///
    /// An ambient slot, not a parameter, on purpose: the async API runs the app's synchronous block on a thread of
    /// the database's (the engine's transaction runner sets the slot there), and the block's calls — `create`, `recover`,
    /// a delete's rules, a migration's steps — have no parameter an app could pass it through. Read by the context's
    /// scans and batches and by the driver just before a write commits.
    package static var current: CancellationFlag? {
        guard let pointer = pthread_getspecific(currentFlagKey) else { return nil }
        return Unmanaged<CancellationFlag>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Throws `CancellationError` when the calling thread works for a cancelled task.
    @inline(__always)
    @usableFromInline package static func checkCurrent() throws {
        try current?.check()
    }

    /// Runs `body` with `flag` as the calling thread's ``current`` flag.
    package static func withCurrent<R>(_ flag: CancellationFlag, _ body: () throws -> R) rethrows -> R {
        let previous = pthread_getspecific(currentFlagKey)
        pthread_setspecific(currentFlagKey, Unmanaged.passUnretained(flag).toOpaque())
        defer { pthread_setspecific(currentFlagKey, previous) }
        return try withExtendedLifetime(flag) { try body() }
    }

    /// Runs `work` where `submit` sends it (a queue or a thread, never the cooperative pool), with a flag the
    /// awaiting task's cancellation sets: work still waiting when the task is cancelled never starts; work under way
    /// sees the flag as its thread's ``current`` one (a write checks it before committing). A submission refused
    /// (its runner was stopped) throws ``PersistenceError/Code/closed``.
    ///
    /// The caller's trace context goes with the work, so the transaction's span is a child of the caller's.
    package static func run<R: Sendable>(
        _ work: @escaping @Sendable () throws -> R, submit: (@escaping @Sendable () -> Void) -> Bool
    ) async throws -> R {
        try Task.checkCancellation()
        let flag = CancellationFlag()
        // A task-local, which doesn't reach another thread by itself.
        let context = ServiceContext.current
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let submitted = submit {
                    guard !flag.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                    continuation.resume(
                        with: Result {
                            try ServiceContext.withValue(context) { try CancellationFlag.withCurrent(flag, work) }
                        })
                }
                if !submitted {
                    continuation.resume(throwing: PersistenceError(.closed, "the database was closed"))
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }

    /// Runs `work` on a global queue, cancellable as a transaction is (opening a store that migrates, say).
    package static func runOffPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(work) { job in
            DispatchQueue.global(qos: .userInitiated).async(execute: job)
            return true
        }
    }
}

/// The thread-local slot of ``CancellationFlag/current``.
private let currentFlagKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

extension DatabaseContext {
    /// Whether the task awaiting this transaction (through the async `read` or `write`) has been cancelled; always
    /// `false` in a synchronous call.
    public var isCancelled: Bool { CancellationFlag.current?.isCancelled ?? false }

    /// Throws `CancellationError` when the task awaiting this transaction has been cancelled: call it between steps
    /// of long work in a block. A write that throws it is rolled back like any other.
    ///
    /// The library's own long operations — ``forEach(_:query:_:)``, batch `create` and `upsert`, `reconcile`,
    /// deleting by condition — already check between records, and a write checks once more just before it
    /// commits: a cancelled write never commits, and a write that committed is never reported as cancelled.
    public func checkCancellation() throws { try CancellationFlag.checkCurrent() }
}
