import Foundation
import PersistenceCore
import Synchronization

/// The writer connection behind a lock, with the thread that holds it.
///
/// `@unchecked Sendable`: `connection` is touched only between `lock.lock()` and `lock.unlock()` in
/// ``withConnection(_:)``, so one thread at a time uses it; `owner` is atomic.
final class WriterLock: @unchecked Sendable {
    private let connection: Connection
    private let lock = NSLock()
    private let owner = Atomic<UInt>(0)

    init(_ connection: Connection) { self.connection = connection }

    /// Whether the calling thread holds the lock (a transaction on it is open further up the stack).
    var isHeldByCurrentThread: Bool { owner.load(ordering: .acquiring) == currentThreadID() }

    /// Runs `body` with the connection, exclusively.
    /// - Throws: `PersistenceError/Code/nestedTransaction` when the calling thread already holds it, instead of
    ///   deadlocking.
    func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        let me = currentThreadID()
        guard owner.load(ordering: .acquiring) != me else {
            throw PersistenceError(
                .nestedTransaction, "a transaction was started inside a write transaction on the same thread")
        }
        lock.lock()
        owner.store(me, ordering: .releasing)
        defer {
            owner.store(0, ordering: .releasing)
            lock.unlock()
        }
        return try body(connection)
    }
}

/// Read-only connections, opened on demand up to a limit, each used by one read transaction at a time.
///
/// `@unchecked Sendable`: `idle` and `opened` are touched only under `lock`; a connection taken from `idle` is used
/// by one thread until it is put back.
final class ReaderPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Connection] = []
    private let slots: DispatchSemaphore
    private let open: () throws -> Connection

    init(size: Int, open: @escaping () throws -> Connection) {
        slots = DispatchSemaphore(value: size)
        self.open = open
    }

    /// Closes the idle readers. SQLite removes the `-wal` and `-shm` files only when the last connection to close
    /// can write, so the database closes its readers before its writer.
    func closeIdle() {
        lock.lock()
        idle.removeAll()
        lock.unlock()
    }

    /// Runs `body` with a reader, waiting while all are busy.
    func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        slots.wait()
        defer { slots.signal() }
        lock.lock()
        let reused = idle.popLast()
        lock.unlock()
        let connection = try reused ?? open()
        defer {
            lock.lock()
            idle.append(connection)
            lock.unlock()
        }
        return try body(connection)
    }
}

private func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}
