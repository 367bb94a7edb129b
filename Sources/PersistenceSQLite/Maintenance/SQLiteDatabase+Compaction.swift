import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

extension SQLiteDatabase {
    /// The bytes of the store's file that hold no data: pages freed by deletes, and by a migration that rebuilt
    /// tables (a mapped step, a changed attribute), which SQLite keeps for reuse rather than giving back. A migration
    /// of 100,000 records that rebuilds its table leaves about as many free bytes as the table holds.
    ///
    /// Always 0 in memory (nothing to give back).
    public var reclaimableBytes: Int {
        get throws {
            guard fileURL != nil else { return 0 }
            return try read { context in
                let pages = try context.storage.connection.scalar("PRAGMA freelist_count")
                let size = try context.storage.connection.scalar("PRAGMA page_size")
                guard case .integer(let free)? = pages, case .integer(let bytes)? = size else { return 0 }
                return Int(free * bytes)
            }
        }
    }

    /// Rewrites the store's file without its free pages (SQLite's `VACUUM`, then a checkpoint that truncates the
    /// write-ahead log) and returns how many bytes the file shrank by. Worth calling after a migration that rebuilt
    /// tables, or after deleting much of the data, when ``reclaimableBytes`` is large — at start-up or when the app
    /// is idle: it rewrites the whole store, needs up to twice its size on disk meanwhile, and holds the writer until
    /// it is done (reads go on).
    ///
    /// - Returns: The bytes the file gave back (0 in memory).
    /// - Throws: `nestedTransaction` inside one of this database's transactions; `storageFull` when the disk can't
    ///   hold the copy (the store is unchanged); `busy` when another process holds the store.
    @discardableResult
    public func compact() throws -> Int {
        // A read of this thread would keep the checkpoint from truncating the log: wait for itself.
        guard readers?.depth.value ?? 0 == 0 else {
            throw PersistenceError(.nestedTransaction, "a store can't be compacted inside one of its own transactions")
        }
        return try writer.withConnection { connection in
            let before = fileURL.map(Self.fileSize) ?? 0
            try connection.execute("VACUUM")
            guard let fileURL else { return 0 }
            _ = try connection.scalar("PRAGMA wal_checkpoint(TRUNCATE)")
            return max(0, before - Self.fileSize(fileURL))
        }
    }

    /// ``compact()`` off the calling task's thread.
    @discardableResult
    public func compact() async throws -> Int {
        try await runner.write { try self.compact() }
    }

    private static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
