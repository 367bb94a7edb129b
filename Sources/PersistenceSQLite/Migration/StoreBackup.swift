internal import CSQLite
import Foundation
import PersistenceCore

/// Copies a store with SQLite's online backup API before a heavyweight migration changes it.
enum StoreBackup {
    /// Copies the committed content of `connection`'s main database to `file`, whole or not at all: the copy is
    /// written beside it under a temporary name and renamed when complete (an older backup of that name is
    /// replaced).
    ///
    /// Called in the migration's transaction before it changes anything, so the copy is the store as it was.
    static func copy(from connection: Connection, to file: URL) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).\(UUID().uuidString).partial")
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            let destination = try Connection(path: temporary.path, readOnly: false, busyTimeoutMilliseconds: 0)
            // sqlite3_backup_init: "If an error occurs within sqlite3_backup_init(), then NULL is returned and an
            // error code and error message are stored in the destination database connection"; a backup handle that
            // was made is released by sqlite3_backup_finish() whatever happened.
            guard let backup = sqlite3_backup_init(destination.handle, "main", connection.handle, "main") else {
                throw SQLiteError.make(
                    sqlite3_errcode(destination.handle), destination.handle, context: "could not start the backup")
            }
            let stepped = sqlite3_backup_step(backup, -1)
            let finished = sqlite3_backup_finish(backup)
            guard stepped == SQLITE_DONE else {
                throw SQLiteError.make(stepped, destination.handle, context: "could not copy the store")
            }
            try SQLiteError.check(finished, destination.handle, "could not finish the backup")
        }
        try? FileManager.default.removeItem(at: file)
        do {
            try FileManager.default.moveItem(at: temporary, to: file)
        } catch {
            throw PersistenceError(
                .ioFailure, "could not name the backup '\(file.lastPathComponent)'", underlyingError: error)
        }
    }
}
