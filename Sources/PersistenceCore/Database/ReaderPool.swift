import Foundation

/// What a closed database's operations throw.
package let closedError = PersistenceError(.closed, "the database was closed")

/// A backend's connection, as a ``ReaderPool`` keeps it.
package protocol PooledConnection: AnyObject {
    /// Whether the connection was dropped (by a server or the network) and must be replaced; a file's connection
    /// never is.
    var isClosed: Bool { get }
    /// Closes the connection.
    func close()
}

/// Read connections, opened on demand up to a limit, each used by one read transaction at a time; a connection
/// found dropped is replaced by a new one.
///
/// `@unchecked Sendable`: `idle` and `isClosed` are touched only under `lock`; a connection taken from `idle` is
/// used by one thread until it is put back.
package final class ReaderPool<Connection: PooledConnection>: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Connection] = []
    private let size: Int
    private let slots: DispatchSemaphore
    private let open: () throws -> Connection
    private var isClosed = false
    /// How many read transactions of this pool the calling thread has open.
    package let readDepth = ThreadCounter()

    package init(size: Int, open: @escaping () throws -> Connection) {
        self.size = size
        slots = DispatchSemaphore(value: size)
        self.open = open
    }

    /// Refuses new reads, waits for those under way to end, and closes every reader.
    package func close() {
        lock.lock()
        let wasClosed = isClosed
        isClosed = true
        lock.unlock()
        guard !wasClosed else { return }
        for _ in 0..<size { slots.wait() }
        lock.lock()
        let closing = idle
        idle.removeAll()
        lock.unlock()
        for connection in closing { connection.close() }
        // Reads that were waiting for a slot wake up, see the pool closed and throw.
        for _ in 0..<size { slots.signal() }
    }

    /// Lets go of the idle readers (they close when released) without closing the pool.
    package func closeIdle() {
        lock.lock()
        idle.removeAll()
        lock.unlock()
    }

    /// Runs `body` with a reader, waiting while all are busy.
    /// - Throws: `closed` once the pool is closed; what opening a connection throws.
    package func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        slots.wait()
        defer { slots.signal() }
        lock.lock()
        guard !isClosed else {
            lock.unlock()
            throw closedError
        }
        var reused = idle.popLast()
        lock.unlock()
        if let dropped = reused, dropped.isClosed {
            dropped.close()
            reused = nil
        }
        let connection = try reused ?? open()
        defer {
            if !connection.isClosed {
                lock.lock()
                idle.append(connection)
                lock.unlock()
            }
        }
        readDepth.increment()
        defer { readDepth.decrement() }
        return try body(connection)
    }
}
