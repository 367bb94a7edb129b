import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// The lock that serializes a database's write transactions, knowing which thread holds it.
///
/// Every backend (SQLite, LMDB, PostgreSQL) runs one write of a database at a time, under this lock. A second write
/// started on the thread that holds the lock would wait for itself forever; this lock throws
/// ``PersistenceError/Code/nestedTransaction`` instead.
@_spi(PersistenceBackend) public final class WriterLock: Sendable {
    private let mutex = NSLock()
    private let owner = Atomic<UInt>(0)

    /// A lock no thread holds.
    @_spi(PersistenceBackend) public init() {}

    /// Whether the calling thread holds the lock (is inside a write).
    @_spi(PersistenceBackend) public var isHeldByCurrentThread: Bool {
        owner.load(ordering: .acquiring) == currentThreadID()
    }

    /// Runs `body` while holding the lock.
    /// - Throws: ``PersistenceError/Code/nestedTransaction`` when the calling thread already holds it.
    @_spi(PersistenceBackend) public func withLock<R>(_ body: () throws -> R) throws -> R {
        let me = currentThreadID()
        guard owner.load(ordering: .acquiring) != me else {
            throw PersistenceError(
                .nestedTransaction, "a transaction was started inside a write transaction on the same thread")
        }
        mutex.lock()
        owner.store(me, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            mutex.unlock()
        }
        return try body()
    }
}

/// An identifier of the calling thread, never 0.
private func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}
