internal import CSQLite
import PersistenceCore

/// The one place that turns SQLite result codes into ``PersistenceError``s.
enum SQLiteError {
    /// The error for a failed call on `db`, keeping SQLite's extended code and message.
    static func make(_ resultCode: Int32, _ db: OpaquePointer?, context: String) -> PersistenceError {
        let extended = db.map { sqlite3_extended_errcode($0) } ?? resultCode
        // The connection's last error may belong to another call when the failing one set none (for example a
        // bind): trust it only when its primary code agrees.
        let code = (extended & 0xFF) == (resultCode & 0xFF) ? extended : resultCode
        let nativeMessage =
            db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        return PersistenceError(map(code), context, nativeCode: code, nativeMessage: nativeMessage)
    }

    /// Throws unless `resultCode` is `SQLITE_OK`.
    static func check(_ resultCode: Int32, _ db: OpaquePointer?, _ context: @autoclosure () -> String) throws {
        guard resultCode == SQLITE_OK else { throw make(resultCode, db, context: context()) }
    }

    // sqlite3.h defines these as expressions (`SQLITE_CONSTRAINT | (6<<8)`), which Swift does not import.
    private static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
    private static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

    static func map(_ code: Int32) -> PersistenceError.Code {
        switch code {
        case constraintPrimaryKey: return .duplicateKey
        case constraintUnique: return .uniqueViolation
        default: break
        }
        switch code & 0xFF {
        case SQLITE_CONSTRAINT: return .constraintViolation
        case SQLITE_FULL: return .storageFull
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_READONLY: return .readOnly
        case SQLITE_CANTOPEN: return .cannotOpen
        case SQLITE_PERM, SQLITE_AUTH: return .permissionDenied
        case SQLITE_IOERR: return .ioFailure
        case SQLITE_TOOBIG, SQLITE_RANGE, SQLITE_MISMATCH: return .invalidValue
        case SQLITE_ERROR: return .backend
        default: return .backend
        }
    }
}
