import Dispatch

/// Runs blocking transaction work off Swift's cooperative thread pool and awaits its result.
///
/// Backends give each database one runner: writes go through a serial queue (they would wait for the writer lock
/// anyway, and this way waiting writes hold no thread), reads through a concurrent one.
package struct TransactionRunner: Sendable {
    private let reads: DispatchQueue
    private let writes: DispatchQueue

    /// Creates the queues, labelled for debugging.
    package init(label: String) {
        reads = DispatchQueue(label: "\(label).reads", qos: .userInitiated, attributes: .concurrent)
        writes = DispatchQueue(label: "\(label).writes", qos: .userInitiated)
    }

    /// Runs a read on the concurrent queue.
    package func read<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(on: reads, work)
    }

    /// Runs a write on the serial queue.
    package func write<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(on: writes, work)
    }

    /// Runs `work` on `queue` with a ``CancellationFlag`` the awaiting task's cancellation sets: work still queued
    /// when the task is cancelled never starts; work under way sees the flag (a write checks it before committing).
    private func run<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R) async throws
        -> R
    {
        try await Self.run(on: queue, work)
    }

    /// Runs `work` on a global queue, cancellable as a transaction is (opening a store that migrates, say).
    package static func run<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
        try await run(on: .global(qos: .userInitiated), work)
    }

    private static func run<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R)
        async throws -> R
    {
        try Task.checkCancellation()
        let flag = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    guard !flag.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                    continuation.resume(with: Result { try CancellationFlag.withCurrent(flag, work) })
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }
}
