/// The one connection a database writes through, used by one write at a time under a ``WriterLock``, beside the
/// ``ReaderPool`` its reads use; a server's connection found dropped between transactions is replaced by a new one.
///
/// `State` is what the backend keeps about the writer between writes (SQLite's last `data_version`, PostgreSQL's
/// last commit number), read and written only inside ``withConnection(_:)``.
///
/// `@unchecked Sendable`: `connection`, `isClosed` and `state` are touched only while holding `lock`.
package final class WriterSlot<Connection: PooledConnection, State>: @unchecked Sendable {
    private var connection: Connection?
    private var isClosed = false
    private let lock = WriterLock()
    /// Opens a replacement for a dropped connection; `nil` where connections are never dropped (a file's).
    private let reopen: (() throws -> Connection)?
    private var storedState: State

    package init(_ connection: Connection, state: State, reopen: (() throws -> Connection)? = nil) {
        self.connection = connection
        storedState = state
        self.reopen = reopen
    }

    /// The backend's state; only inside ``withConnection(_:)``.
    package var state: State {
        get { storedState }
        set { storedState = newValue }
    }

    /// Runs `body` with the connection, exclusively — a new one when the last was dropped.
    /// - Throws: ``PersistenceError/Code/nestedTransaction`` when the calling thread already holds it,
    ///   ``PersistenceError/Code/closed`` once the database is closed; what reconnecting throws.
    package func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        try lock.withLock {
            guard !isClosed else { throw closedError }
            if let connection, !connection.isClosed { return try body(connection) }
            guard let reopen else { throw closedError }
            connection?.close()
            connection = nil
            let opened = try reopen()
            connection = opened
            return try body(opened)
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
