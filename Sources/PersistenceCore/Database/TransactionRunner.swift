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

    private func run<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R) async throws
        -> R
    {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }
}
