internal import CLMDB
import Foundation
import PersistenceCore

/// The one place that turns LMDB return codes into ``PersistenceError``s.
enum LMDBError {
    /// Thrown inside a write when the map is full; the database grows the map and runs the write again.
    struct MapFull: Error {}
    /// Thrown when beginning a transaction finds the map grown by another process; the environment adopts the new
    /// size (which needs the growth lock exclusively) and begins again.
    struct MapResized: Error {}

    static func make(_ code: Int32, _ context: String) -> PersistenceError {
        let message = mdb_strerror(code).map { String(cString: $0) } ?? "LMDB error \(code)"
        return PersistenceError(map(code), context, nativeCode: code, nativeMessage: message)
    }

    /// Throws unless `code` is `MDB_SUCCESS`; `MDB_MAP_FULL` becomes ``MapFull``.
    @inline(__always)
    static func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        guard code != MDB_SUCCESS else { return }
        if code == MDB_MAP_FULL { throw MapFull() }
        throw make(code, context())
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
