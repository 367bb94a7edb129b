internal import CLMDB
import Foundation
import PersistenceCore

/// The one place that turns LMDB return codes into ``PersistenceError``s.
enum LMDBError {
    /// Thrown out of a write transaction that hit `MDB_MAP_FULL`, so the environment can grow the map outside the
    /// growth lock's shared hold before it reports `storageFull`. Never reaches users.
    struct MapFull: Error {
        /// What the write asked to store, measured to its end (see ``Transaction/demand``).
        var demand = WriteDemand()
    }
    /// Thrown when beginning a transaction finds the map grown by another process; the environment adopts the new
    /// size (which needs the growth lock exclusively) and begins again.
    struct MapResized: Error {}

    static func make(_ code: Int32, _ context: String) -> PersistenceError {
        let message = mdb_strerror(code).map { String(cString: $0) } ?? "LMDB error \(code)"
        return PersistenceError(map(code), context, nativeCode: code, nativeMessage: message)
    }

    /// Throws unless `code` is `MDB_SUCCESS`.
    @inline(__always)
    static func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        guard code != MDB_SUCCESS else { return }
        throw make(code, context())
    }

    /// The error for a failed write or commit, telling a full disk from other I/O failures.
    ///
    /// LMDB writes pages with `pwrite`; when the disk fills, a short write is reported as `EIO`, not `ENOSPC`. So
    /// an `EIO` on a file system with (almost) no space left for this process is reported as `storageFull`.
    static func make(_ code: Int32, _ context: String, path: String) -> PersistenceError {
        var error = make(code, context)
        if code == EIO || code == ENOSPC, fileSystemIsFull(at: path) {
            error.code = .storageFull
            error.message = context + ": the disk is full; the transaction was rolled back and nothing of it was stored"
        }
        return error
    }

    /// Whether the file system holding `path` has less than 1 MiB left for this process (root may use the blocks
    /// reserved for it, so it is judged by all free blocks).
    static func fileSystemIsFull(at path: String) -> Bool {
        var info = statvfs()
        let directory = (path as NSString).deletingLastPathComponent
        guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return false }
        let blocks = geteuid() == 0 ? UInt64(info.f_bfree) : UInt64(info.f_bavail)
        return blocks.multipliedReportingOverflow(by: UInt64(info.f_frsize)).partialValue < 1 << 20
    }

    static func map(_ code: Int32) -> PersistenceError.Code {
        switch code {
        case MDB_MAP_FULL: .storageFull
        case MDB_KEYEXIST: .duplicateKey
        case MDB_NOTFOUND: .notFound
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID, MDB_VERSION_MISMATCH: .corrupt
        case MDB_READERS_FULL, MDB_TXN_FULL, MDB_CURSOR_FULL, MDB_DBS_FULL: .busy
        case MDB_BAD_VALSIZE: .keyTooLarge
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOSPC: .storageFull
        case ENOENT: .cannotOpen
        case EIO: .ioFailure
        default: .backend
        }
    }
}
