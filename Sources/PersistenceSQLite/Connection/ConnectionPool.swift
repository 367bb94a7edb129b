import Foundation
import PersistenceCore

/// The writer connection, used only while holding the core's ``WriterLock``.
///
/// `@unchecked Sendable`: `connection` and `dataVersion` are touched only inside `lock.withLock`, so by one thread
/// at a time.
final class WriterConnection: @unchecked Sendable {
    /// `nil` once the database is closed.
    private var connection: Connection?
    private let lock = WriterLock()
    /// Whether other connections (other processes, other databases on the file) can commit to the file.
    let watchesOtherConnections: Bool
    /// The writer's `PRAGMA data_version` when last checked; read and written only under `lock`.
    var dataVersion: Value?

    init(_ connection: Connection, watchesOtherConnections: Bool) {
        self.connection = connection
        self.watchesOtherConnections = watchesOtherConnections
    }

    /// Runs `body` with the connection, exclusively.
    /// - Throws: `PersistenceError.Code.nestedTransaction` when the calling thread already holds it.
    ///   `PersistenceError.Code.closed` once the database is closed.
    func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        try lock.withLock {
            guard let connection else { throw closedError }
            return try body(connection)
        }
    }

    /// Whether the calling thread is inside a write.
    var isHeldByCurrentThread: Bool { lock.isHeldByCurrentThread }

    /// Waits for the write under way, then closes the connection.
    /// - Throws: `PersistenceError.Code.nestedTransaction` inside a write on this thread.
    func close() throws {
        try lock.withLock {
            connection?.close()
            connection = nil
        }
    }
}

/// What a closed database's operations throw.
let closedError = PersistenceError(.closed, "the database was closed")

/// Read-only connections, opened on demand up to a limit, each used by one read transaction at a time.
///
/// `@unchecked Sendable`: `idle` and `opened` are touched only under `lock`; a connection taken from `idle` is used
/// by one thread until it is put back.
final class ReaderPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [Connection] = []
    private let size: Int
    private let slots: DispatchSemaphore
    private let open: () throws -> Connection
    private var isClosed = false
    /// How many read transactions of this pool the calling thread has open.
    let readDepth = ThreadCounter()

    init(size: Int, open: @escaping () throws -> Connection) {
        self.size = size
        slots = DispatchSemaphore(value: size)
        self.open = open
    }

    /// Refuses new reads, waits for those under way to end, and closes every reader.
    func close() {
        lock.lock()
        let wasClosed = isClosed
        isClosed = true
        lock.unlock()
        guard !wasClosed else { return }
        for _ in 0..<size { slots.wait() }
        lock.lock()
        for connection in idle { connection.close() }
        idle.removeAll()
        lock.unlock()
        // Reads that were waiting for a slot wake up, see the pool closed and throw.
        for _ in 0..<size { slots.signal() }
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
        guard !isClosed else {
            lock.unlock()
            throw closedError
        }
        let reused = idle.popLast()
        lock.unlock()
        let connection = try reused ?? open()
        defer {
            lock.lock()
            idle.append(connection)
            lock.unlock()
        }
        readDepth.increment()
        defer { readDepth.decrement() }
        return try body(connection)
    }
}
