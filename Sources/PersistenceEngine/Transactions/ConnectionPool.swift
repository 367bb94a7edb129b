import Foundation
@_spi(PersistenceBackend) package import PersistenceCore

/// What a closed database's operations throw.
package let closedError = PersistenceError(.closed, "the database was closed")

/// A backend's connection, as a ``ConnectionPool`` keeps it.
package protocol PooledConnection: AnyObject {
    /// Whether the connection was dropped (by a server or the network) and must be replaced; a file's connection
    /// never is.
    var isClosed: Bool { get }
    /// Closes the connection.
    func close()
}

/// Connections opened on demand up to a limit, each used by one transaction at a time — an embedded store's readers,
/// a server's readers and its writers (two pools) — a connection found dropped is replaced by a new one.
///
/// `@unchecked Sendable`: `idle` and `isClosed` are touched only under `lock`; a connection taken from `idle` is
/// used by one thread until it is put back.
package final class ConnectionPool<Connection: PooledConnection>: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Connection] = []
    private let size: Int
    private let slots: DispatchSemaphore
    private let open: () throws -> Connection
    private var isClosed = false
    /// How many transactions of this pool the calling thread has open.
    package let depth = ThreadCounter()

    /// A pool of at most `size` connections, starting with `idle` ones already open.
    package init(size: Int, idle: [Connection] = [], open: @escaping () throws -> Connection) {
        self.size = size
        self.idle = idle
        slots = DispatchSemaphore(value: size)
        self.open = open
    }

    /// Refuses new transactions, waits for those under way to end, and closes every connection.
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
        // Transactions that were waiting for a slot wake up, see the pool closed and throw.
        for _ in 0..<size { slots.signal() }
    }

    /// Lets go of the idle connections (they close when released) without closing the pool.
    package func closeIdle() {
        lock.lock()
        idle.removeAll()
        lock.unlock()
    }

    /// Runs `body` with a connection, waiting while all are busy.
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
        depth.increment()
        defer { depth.decrement() }
        return try body(connection)
    }
}
