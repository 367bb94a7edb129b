import Foundation
import PersistenceCore

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

extension ServerConnection: PooledConnection {}
