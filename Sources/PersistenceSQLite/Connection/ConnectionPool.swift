import Foundation
import PersistenceCore

/// The writer connection, used only while holding the core's ``WriterLock``.
///
/// `@unchecked Sendable`: `connection` and `dataVersion` are touched only inside `lock.withLock`, so by one thread
/// at a time.
final class WriterConnection: @unchecked Sendable {
    private let connection: Connection
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
    func withConnection<R>(_ body: (Connection) throws -> R) throws -> R {
        try lock.withLock { try body(connection) }
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
