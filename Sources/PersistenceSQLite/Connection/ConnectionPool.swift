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

extension Connection: PooledConnection {
    /// A file's connection is never dropped.
    var isClosed: Bool { false }
}
