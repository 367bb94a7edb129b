import Foundation
import PersistenceCore

/// What a closed database's operations throw.
let closedError = PersistenceError(.closed, "the database was closed")

/// The writer connection, used only while holding the core's `WriterLock`; replaced by a new one when the server
/// or the network dropped it between transactions.
///
/// `@unchecked Sendable`: `connection` and `lastCommitSeen` are touched only inside `lock.withLock`.
final class WriterConnection: @unchecked Sendable {
    private var connection: ServerConnection?
    private var isClosed = false
    private let lock = WriterLock()
    private let open: () throws -> ServerConnection
    /// The commit sequence's value this database last drew or saw; read and written only under `lock`.
    var lastCommitSeen: Int64?

    init(_ connection: ServerConnection, open: @escaping () throws -> ServerConnection) {
        self.connection = connection
        self.open = open
    }

    /// Runs `body` with the connection, exclusively — a new one when the last was dropped.
    /// - Throws: `nestedTransaction` when the calling thread already holds it; `closed` once the database is closed;
    ///   what connecting throws.
    func withConnection<R>(_ body: (ServerConnection) throws -> R) throws -> R {
        try lock.withLock {
            guard !isClosed else { throw closedError }
            if let connection, !connection.isClosed { return try body(connection) }
            connection?.close()
            connection = nil
            let opened = try open()
            connection = opened
            return try body(opened)
        }
    }

    /// Whether the calling thread is inside a write.
    var isHeldByCurrentThread: Bool { lock.isHeldByCurrentThread }

    /// Waits for the write under way, then closes the connection.
    func close() throws {
        try lock.withLock {
            isClosed = true
            connection?.close()
            connection = nil
        }
    }
}

/// Read connections, opened on demand up to a limit, each used by one read transaction at a time; a connection the
/// server or the network dropped is replaced by a new one.
///
/// `@unchecked Sendable`: `idle` and `isClosed` are touched only under `lock`; a connection taken from `idle` is
/// used by one thread until it is put back.
final class ReaderPool: @unchecked Sendable {
    private let lock = NSLock()
    private var idle: [ServerConnection] = []
    private let size: Int
    private let slots: DispatchSemaphore
    private let open: () throws -> ServerConnection
    private var isClosed = false
    /// How many read transactions of this pool the calling thread has open.
    let readDepth = ThreadCounter()

    init(size: Int, open: @escaping () throws -> ServerConnection) {
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
        let closing = idle
        idle.removeAll()
        lock.unlock()
        for connection in closing { connection.close() }
        for _ in 0..<size { slots.signal() }
    }

    /// Runs `body` with a reader, waiting while all are busy.
    func withConnection<R>(_ body: (ServerConnection) throws -> R) throws -> R {
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
