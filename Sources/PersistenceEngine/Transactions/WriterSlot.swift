@_spi(PersistenceBackend) import PersistenceCore

/// The one connection an embedded store writes through, used by one write at a time under a ``WriterLock``, beside
/// the ``ConnectionPool`` its reads use. (A server's writes run concurrently on a pool of their own.)
///
/// `State` is what the backend keeps about the writer between writes (SQLite's last `data_version`), read and
/// written only inside ``withConnection(_:)``.
///
/// `@unchecked Sendable`: `connection`, `isClosed` and `state` are touched only while holding `lock`.
package final class WriterSlot<Connection: PooledConnection, State>: @unchecked Sendable {
    private var connection: Connection?
    private var isClosed = false
    private let lock = WriterLock()
    private var storedState: State

    package init(_ connection: Connection, state: State) {
        self.connection = connection
        storedState = state
    }

    /// The backend's state; only inside ``withConnection(_:)``.
    package var state: State {
        get { storedState }
        set { storedState = newValue }
    }

    /// Runs `body` with the connection, exclusively.
    /// - Throws: ``PersistenceError/Code/nestedTransaction`` when the calling thread already holds it,
    ///   ``PersistenceError/Code/closed`` once the database is closed.
    package func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        try lock.withLock {
            guard !isClosed, let connection else { throw closedError }
            return try body(connection)
        }
    }

    /// Whether the calling thread is inside a write.
    package var isHeldByCurrentThread: Bool { lock.isHeldByCurrentThread }

    /// Waits for the write under way, then closes the connection; later writes throw `closed`.
    /// - Throws: ``PersistenceError/Code/nestedTransaction`` inside a write on this thread.
    package func close() throws {
        try lock.withLock {
            isClosed = true
            connection?.close()
            connection = nil
        }
    }
}
