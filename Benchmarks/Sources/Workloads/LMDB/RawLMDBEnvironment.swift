import Foundation
import RawLMDB

/// An error the LMDB C API reported, with its code and `mdb_strerror`.
public struct RawLMDBError: Error, CustomStringConvertible {
    public var code: Int32
    public var context: String

    public var description: String { "LMDB: \(context): \(String(cString: mdb_strerror(code))) (\(code))" }

    /// The one place LMDB return codes become errors.
    @inline(__always)
    static func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        guard code == MDB_SUCCESS else { throw RawLMDBError(code: code, context: context()) }
    }
}

/// One LMDB environment with a records database and a `name` index database (sorted duplicates: name → id, as the
/// library keeps for `Person`'s index), opened with the library's flags (`MDB_NOSUBDIR | MDB_NOTLS`). Owns the
/// `MDB_env`.
final class RawLMDBEnvironment {
    /// Large enough that no run grows it (the library's stores get the same map).
    static let mapSize = 4 << 30

    let handle: OpaquePointer
    private(set) var dbi = MDB_dbi()
    private(set) var indexDBI = MDB_dbi()

    init(path: String) throws {
        var env: OpaquePointer?
        try RawLMDBError.check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw RawLMDBError(code: EINVAL, context: "mdb_env_create returned no environment") }
        // lmdb.h, mdb_env_open: "If this function fails, mdb_env_close() must be called to discard the MDB_env
        // handle."
        do {
            try RawLMDBError.check(mdb_env_set_mapsize(env, Self.mapSize), "mdb_env_set_mapsize")
            try RawLMDBError.check(mdb_env_set_maxdbs(env, 2), "mdb_env_set_maxdbs")
            try RawLMDBError.check(mdb_env_open(env, path, UInt32(MDB_NOSUBDIR | MDB_NOTLS), 0o600), "mdb_env_open")
        } catch {
            mdb_env_close(env)
            throw error
        }
        handle = env
        (dbi, indexDBI) = try write { transaction in
            var dbi = MDB_dbi()
            var indexDBI = MDB_dbi()
            let create = UInt32(MDB_CREATE)
            try RawLMDBError.check(mdb_dbi_open(transaction, "records", create, &dbi), "mdb_dbi_open")
            try RawLMDBError.check(
                mdb_dbi_open(transaction, "index:name", create | UInt32(MDB_DUPSORT), &indexDBI), "mdb_dbi_open")
            return (dbi, indexDBI)
        }
    }

    deinit { mdb_env_close(handle) }

    /// Runs `body` in a write transaction, committed when it returns, aborted when it throws.
    func write<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let transaction = try begin(flags: 0)
        let result: R
        do {
            result = try body(transaction)
        } catch {
            mdb_txn_abort(transaction)
            throw error
        }
        try RawLMDBError.check(mdb_txn_commit(transaction), "mdb_txn_commit")
        return result
    }

    /// Runs `body` in a read-only transaction. Values it sees are valid only inside it.
    func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        let transaction = try begin(flags: UInt32(MDB_RDONLY))
        defer { mdb_txn_abort(transaction) }
        return try body(transaction)
    }

    private func begin(flags: UInt32) throws -> OpaquePointer {
        var transaction: OpaquePointer?
        try RawLMDBError.check(mdb_txn_begin(handle, nil, flags, &transaction), "mdb_txn_begin")
        guard let transaction else { throw RawLMDBError(code: EINVAL, context: "mdb_txn_begin returned nothing") }
        return transaction
    }
}

extension RawLMDBEnvironment {
    /// Calls `body` with every key and value of `dbi`, in key order, inside `transaction` (the bytes are valid only
    /// during the call).
    static func forEach(
        in transaction: OpaquePointer, _ dbi: MDB_dbi, _ body: (MDB_val, MDB_val) throws -> Void
    ) throws {
        var cursor: OpaquePointer?
        try RawLMDBError.check(mdb_cursor_open(transaction, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while code == MDB_SUCCESS {
            try body(key, value)
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        guard code == MDB_NOTFOUND else { throw RawLMDBError(code: code, context: "mdb_cursor_get") }
    }
}
