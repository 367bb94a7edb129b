internal import CSQLite
import Foundation
import PersistenceCore

/// Copies a store with SQLite's online backup API before a heavyweight migration changes it.
enum StoreBackup {
    /// The files SQLite may keep beside a database: a partial copy leaves them too.
    private static let companions = ["", "-journal", "-wal", "-shm"]

    /// Copies the committed content of `connection`'s main database to `file`, whole or not at all: the copy is
    /// written beside it under a temporary name and renamed when complete (an older backup of that name is
    /// replaced).
    ///
    /// The temporary copy is locked (`flock`) while it is written, so that an open in another process can tell a
    /// copy under way from one a killed process left behind (``removeAbandonedCopies(of:)``) — the lock ends with
    /// the process that held it, however it ended.
    ///
    /// Called in the migration's transaction before it changes anything, so the copy is the store as it was.
    static func copy(from connection: Connection, to file: URL) throws {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(
            ".\(file.lastPathComponent).\(UUID().uuidString).partial")
        let lock = open(temporary.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0, flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            if lock >= 0 { close(lock) }
            throw PersistenceError(.ioFailure, "could not create the backup's temporary file")
        }
        defer {
            for companion in companions { try? FileManager.default.removeItem(atPath: temporary.path + companion) }
            close(lock)
        }
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

    /// Whether `fileName` is a file of a temporary copy made by ``copy(from:to:)`` for a backup of the store named
    /// `store`: `.<store>.v<version>.sqlite-backup.<UUID>.partial`, or one of its `-journal`, `-wal`, `-shm` files.
    static func isTemporaryCopy(_ fileName: String, ofStore store: String) -> Bool {
        let prefix = ".\(store).v"
        guard fileName.hasPrefix(prefix) else { return false }
        var rest = fileName.dropFirst(prefix.count)
        for companion in companions.dropFirst() where rest.hasSuffix(companion) {
            rest = rest.dropLast(companion.count)
            break
        }
        guard rest.hasSuffix(".partial") else { return false }
        rest = rest.dropLast(".partial".count)
        let parts = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && $0.isNumber }),
            parts[1] == "sqlite-backup", UUID(uuidString: String(parts[2])) != nil
        else { return false }
        return true
    }

    /// Removes the temporary copies a process killed while backing up `store` left beside it — a copy of the user's
    /// data that nothing else would ever remove. A copy another process is still writing (its lock held) is left.
    static func removeAbandonedCopies(of store: URL) {
        let directory = store.deletingLastPathComponent()
        let name = store.deletingPathExtension().lastPathComponent
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for file in files where file.hasSuffix(".partial") && isTemporaryCopy(file, ofStore: name) {
            let path = directory.appendingPathComponent(file).path
            let lock = open(path, O_RDWR | O_CLOEXEC)
            guard lock >= 0 else { continue }
            defer { close(lock) }
            // Held: a backup is under way in another process.
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { continue }
            for companion in companions { try? FileManager.default.removeItem(atPath: path + companion) }
        }
        // Journals whose copy is gone already.
        for file in files where !file.hasSuffix(".partial") && isTemporaryCopy(file, ofStore: name) {
            let path = directory.appendingPathComponent(file).path
            let copy = companions.dropFirst().first { path.hasSuffix($0) }.map { String(path.dropLast($0.count)) }
            if let copy, !FileManager.default.fileExists(atPath: copy) {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }
}
