package import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension SQLiteStoredStore {
    /// The sizes of a store before and after a compaction: the database file and its write-ahead log together.
    package struct Compaction: Sendable {
        package var bytesBefore: Int64
        package var bytesAfter: Int64
        /// Whether the checkpoint that empties the write-ahead log completed (a reader elsewhere can hold it back).
        package var checkpointed: Bool
    }

    /// Rewrites the store at `file` without its free pages: SQLite's `VACUUM` on a read-write connection, atomic as
    /// any SQLite transaction (a failure leaves the store as it was), then `PRAGMA wal_checkpoint(TRUNCATE)` to move
    /// the result into the file and empty the log.
    ///
    /// Nothing waits for another connection: the connection's busy timeout is 0, and a store another connection
    /// is writing (or, in rollback-journal mode, reading) is refused with `storeInUse` rather than waited for.
    /// Connections that merely have the store open go on working, as with any SQLite write.
    ///
    /// - Throws: `PersistenceError` — `notFound`; `invalidSchema`, `unsupportedFormatVersion` or `corrupt` for a
    ///   file that isn't a store this build reads; `storeInUse` (this process has it open, or another connection
    ///   holds a lock); `storageFull` when the disk can't hold the rewrite; `readOnly`.
    package static func compact(file: URL) throws -> Compaction {
        // A store this build reads, checked read-only before anything is written.
        try SQLiteStoredStore(file: file).close()
        guard !StoreFiles.isOpen(file) else {
            throw PersistenceError(.storeInUse, "\(file.path) is open in this process: close its database first")
        }
        let registration = StoreFiles.register(file)
        defer { registration.end() }
        let before = size(file)
        let connection = try Connection(path: file.path, readOnly: false, busyTimeoutMilliseconds: 0)
        defer { connection.close() }
        do {
            // The write lock for a moment: refused at once when another connection writes.
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute("COMMIT")
            try connection.execute("VACUUM")
        } catch let error as PersistenceError where error.code == .busy {
            throw PersistenceError(
                .storeInUse, "\(file.path) is in use by another connection: close it before compacting",
                underlyingError: error)
        }
        // The first column is 1 when a reader held the log back (then the log empties at a later checkpoint).
        let busy = try connection.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
        let checkpointed = busy == nil || busy == .integer(0)
        return Compaction(bytesBefore: before, bytesAfter: size(file), checkpointed: checkpointed)
    }

    /// The database file and its write-ahead log.
    private static func size(_ file: URL) -> Int64 {
        StoredStoreSize.fileSize(file) + StoredStoreSize.fileSize(URL(fileURLWithPath: file.path + "-wal"))
    }
}
