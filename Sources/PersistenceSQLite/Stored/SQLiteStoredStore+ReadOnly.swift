import Foundation
import PersistenceCore

/// How ``SQLiteStoredStore`` opens a store without writing or making any file beside it, in any directory — a
/// read-only one included. A read-only connection to a WAL store still makes `-wal` and `-shm` files when they are
/// missing (and leaves them, owned by whoever ran the tool), and can't open at all where it may not make them.
enum ReadOnlyOpening {
    /// The connection, and the private copy of the store when one was needed.
    struct Opened {
        var connection: Connection
        var copy: PrivateCopy?
    }

    /// A private temporary directory holding a copy of a store, removed with its last owner (an opening that fails
    /// halfway included).
    final class PrivateCopy {
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "persistence-read-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    /// Whether `file`'s header says WAL mode (its read and write versions, bytes 18 and 19, are 2): a connection
    /// opened `immutable` reads the file as it is and reports the journal mode `delete`.
    static func isWriteAheadLogged(_ file: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }

    /// Opens `file` read-only, choosing by the files beside it:
    /// - no write-ahead log, or an empty one, and no `-shm`: no connection has the store open and every commit is in
    ///   the file, so it is opened `immutable` — no lock, nothing made;
    /// - a log and its `-shm`: a connection may have it open (an app writing): opened read-only through them, taking
    ///   a reader's lock as any reader does — SQLite makes nothing, both exist;
    /// - a log with commits but no `-shm` (its last writer was killed before a checkpoint): the commits must be read,
    ///   and reading them needs a `-shm`: the file and its log are copied into a private temporary directory and the
    ///   copy is read.
    static func open(_ file: URL, busyTimeoutMilliseconds: Int32) throws -> Opened {
        let log = file.path + "-wal"
        let sharedMemory = FileManager.default.fileExists(atPath: file.path + "-shm")
        let logBytes = (try? FileManager.default.attributesOfItem(atPath: log))?[.size] as? NSNumber
        if sharedMemory, logBytes != nil {
            return Opened(
                connection: try Connection(
                    path: file.path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds),
                copy: nil)
        }
        guard let logBytes, logBytes.int64Value > 0, !sharedMemory else {
            return Opened(
                connection: try Connection(
                    path: file.path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds, immutable: true),
                copy: nil)
        }
        do {
            let copy = try PrivateCopy()
            let copied = copy.directory.appendingPathComponent(file.lastPathComponent)
            try FileManager.default.copyItem(atPath: file.path, toPath: copied.path)
            try FileManager.default.copyItem(atPath: log, toPath: copied.path + "-wal")
            let connection = try Connection(
                path: copied.path, readOnly: true, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
            return Opened(connection: connection, copy: copy)
        } catch let error as PersistenceError {
            throw error
        } catch {
            throw PersistenceError(
                .ioFailure,
                "\(file.path)'s write-ahead log holds commits; reading them needs a private copy, which could not "
                    + "be made", underlyingError: error)
        }
    }
}
