import Dispatch
@_spi(PersistenceBackend) import PersistenceCore
import Tracing

/// Runs blocking transaction work off Swift's cooperative thread pool and awaits its result.
///
/// An embedded store's runner sends writes through a serial queue (they would wait for the writer lock anyway, and
/// this way waiting writes hold no thread) and reads through a concurrent one. A server's runner sends both to
/// ``WorkerThreads`` as many as its connections: its transactions spend their time waiting on the network, which
/// Dispatch would let only as many of at once as the machine has cores.
@_spi(PersistenceBackend) public struct TransactionRunner: Sendable {
    private enum Lanes {
        case queues(reads: DispatchQueue, writes: DispatchQueue)
        case threads(WorkerThreads)
    }

    private let lanes: Lanes

    /// A runner for an embedded store: its queues, labelled for debugging.
    @_spi(PersistenceBackend) public init(label: String) {
        lanes = .queues(
            reads: DispatchQueue(label: "\(label).reads", qos: .userInitiated, attributes: .concurrent),
            writes: DispatchQueue(label: "\(label).writes", qos: .userInitiated))
    }

    /// A runner for a server's transactions: reads and writes on up to `threads` threads of its own, which run
    /// until ``stop()``.
    package init(label: String, threads: Int) {
        lanes = .threads(WorkerThreads(name: label, limit: threads))
    }

    /// Runs a read (on the concurrent queue, or a worker thread).
    @_spi(PersistenceBackend) public func read<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws
        -> R
    {
        switch lanes {
        case .queues(let reads, _): try await Self.run(on: reads, work)
        case .threads(let threads): try await Self.run(on: threads, work)
        }
    }

    /// Runs a write (on the serial queue, or a worker thread).
    @_spi(PersistenceBackend) public func write<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws
        -> R
    {
        switch lanes {
        case .queues(_, let writes): try await Self.run(on: writes, work)
        case .threads(let threads): try await Self.run(on: threads, work)
        }
    }

    /// Lets a server runner's threads end once the work under way is done; later work throws `closed`.
    package func stop() {
        if case .threads(let threads) = lanes { threads.stop() }
    }

    private static func run<R: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> R)
        async throws -> R
    {
        try await CancellationFlag.run(work) { job in
            queue.async(execute: job)
            return true
        }
    }

    private static func run<R: Sendable>(on threads: WorkerThreads, _ work: @escaping @Sendable () throws -> R)
        async throws -> R
    {
        try await CancellationFlag.run(work) { job in threads.submit(job) }
    }
}
