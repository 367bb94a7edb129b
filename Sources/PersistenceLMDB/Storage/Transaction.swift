internal import CLMDB
import Foundation
import PersistenceCore

/// Owns one `MDB_txn`: committed or aborted exactly once, aborted at the latest when released.
///
/// Values read through it are copied out before they are returned (lmdb.h: data returned by `mdb_get` is valid
/// only until the next update or the end of the transaction).
final class Transaction {
    let handle: OpaquePointer
    let environment: Environment
    let isReadOnly: Bool
    private var isOpen = true
    /// A read begun by ``init(readingFrom:)``: its end keeps the handle, with its reader slot, for the next read.
    private var isKept = false
    /// The transaction this one is nested in (a savepoint), if any.
    private let parent: Transaction?
    /// How many cursors of this transaction are open (``withCursor(_:_:)``): a stepped write commits a step only
    /// when none is, since committing ends the cursors with the transaction and growing the map between steps remaps
    /// the pages they point into.
    private(set) var openCursors = 0
    /// Set when an operation hit `MDB_MAP_FULL`: the transaction is then unusable and is rolled back whole — the
    /// enclosing ones too, since a nested transaction's failure leaves its parent's pages in doubt.
    private(set) var sawMapFull = false {
        didSet { if sawMapFull { parent?.sawMapFull = true } }
    }
    /// What the write asked LMDB to store, savepoints included (kept by the outermost transaction). Once the map is
    /// full nothing more is stored — the whole write is rolled back — but writes are still measured, so the map can
    /// grow to fit the whole write for the next attempt; a read then is an error, as it can't be answered.
    private var ownDemand = WriteDemand()
    var demand: WriteDemand { parent?.demand ?? ownDemand }
    /// How many changes each database had through this transaction, by `MDB_dbi`: a walk that keeps its cursor
    /// between records (``Walk``) seeks its place again when its database changed meanwhile.
    private var changes: [Int] = []

    /// How many changes `dbi` had through this transaction so far.
    func changeCount(of dbi: MDB_dbi) -> Int { Int(dbi) < changes.count ? changes[Int(dbi)] : 0 }

    @inline(__always)
    private func noteChange(_ dbi: MDB_dbi) {
        let index = Int(dbi)
        if index >= changes.count { changes += repeatElement(0, count: index + 1 - changes.count) }
        changes[index] &+= 1
    }

    private func record(key: Int, value: Int) {
        if let parent { parent.record(key: key, value: value) } else { ownDemand.record(key: key, value: value) }
    }

    convenience init(environment: Environment, readOnly: Bool) throws {
        var txn: OpaquePointer?
        let code = mdb_txn_begin(environment.handle, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        try self.init(began: code, txn, environment: environment, readOnly: readOnly, kept: false)
    }

    /// Begins a read on one of the environment's idle read handles (``Environment/takeIdleReader()``) when it has
    /// one — `mdb_txn_renew`: the handle keeps its reader slot, so no allocation and no reader-table lock (in the
    /// vendored LMDB, none of its semaphore's guard either) — or on a new one; ending it keeps the handle for the next
    /// read (``Environment/keepIdleReader(_:)``). For ``Environment/read(_:)``, which runs no read under way across
    /// a change of the map.
    convenience init(readingFrom environment: Environment) throws {
        var txn: OpaquePointer?
        var code: Int32
        if let idle = environment.takeIdleReader() {
            code = mdb_txn_renew(idle)
            if code == MDB_SUCCESS { txn = idle } else { mdb_txn_abort(idle) }
        } else {
            code = mdb_txn_begin(environment.handle, nil, UInt32(MDB_RDONLY), &txn)
        }
        try self.init(began: code, txn, environment: environment, readOnly: true, kept: true)
    }

    /// A top-level transaction begun (`code`, the handle `txn`) by one of the initializers above.
    private init(
        began code: Int32, _ txn: OpaquePointer?, environment: Environment, readOnly: Bool, kept: Bool
    ) throws {
        // Another process grew the map. Adopting its size needs the growth lock exclusively, which the caller holds
        // shared: let the environment adopt it outside, then begin again.
        if code == MDB_MAP_RESIZED { throw LMDBError.MapResized() }
        try LMDBError.check(code, "could not begin a transaction")
        guard let txn else { throw PersistenceError(.backend, "LMDB returned no transaction") }
        handle = txn
        self.environment = environment
        isReadOnly = readOnly
        isKept = kept
        parent = nil
    }

    /// Begins a transaction nested in the write `parent`: committing it merges its changes into the parent, aborting
    /// it drops them. The parent must not be used until it ends.
    init(nestedIn parent: Transaction) throws {
        var txn: OpaquePointer?
        let code = mdb_txn_begin(parent.environment.handle, parent.handle, 0, &txn)
        if code == MDB_MAP_FULL { parent.sawMapFull = true }
        try LMDBError.check(code, "could not begin a savepoint")
        guard let txn else { throw PersistenceError(.backend, "LMDB returned no transaction") }
        handle = txn
        environment = parent.environment
        isReadOnly = false
        self.parent = parent
    }

    deinit { abort() }

    /// LMDB's id of the transaction: a write's is one more than the last committed write's; a read's is the id of
    /// the write whose snapshot it sees.
    var id: Int { Int(mdb_txn_id(handle)) }

    func commit() throws {
        guard isOpen else { return }
        isOpen = false
        // mdb_txn_commit frees the handle whether it succeeds or not.
        try check(mdb_txn_commit(handle), "could not commit")
        // A write's commit point is its meta page, which LMDB writes through a descriptor opened with O_DSYNC: on
        // Apple that doesn't flush the drive's cache, so `fullFsync` flushes it after the commit (a nested commit
        // only merges into its parent, and a read writes nothing).
        if environment.fullFsync, parent == nil, !isReadOnly { environment.flushDriveCache() }
    }

    func abort() {
        guard isOpen else { return }
        isOpen = false
        if isKept {
            // Ends the snapshot (the slot no longer holds pages back) and keeps the handle.
            mdb_txn_reset(handle)
            environment.keepIdleReader(handle)
        } else {
            mdb_txn_abort(handle)
        }
    }

    @inline(__always)
    private func check(_ code: Int32, _ context: @autoclosure () -> String) throws {
        guard code != MDB_SUCCESS else { return }
        if code == MDB_MAP_FULL { sawMapFull = true }
        // After the map filled, LMDB refuses everything (MDB_BAD_TXN): say what happened instead.
        if sawMapFull {
            throw PersistenceError(
                .storageFull,
                "the write filled the map; it will be rolled back whole, so it can't read now",
                nativeCode: MDB_MAP_FULL, nativeMessage: "MDB_MAP_FULL: Environment mapsize limit reached")
        }
        if code == EIO || code == ENOSPC { throw LMDBError.make(code, context(), path: environment.path) }
        try LMDBError.check(code, context())
    }

    /// The value at `key`, copied out, or `nil`.
    func get(_ dbi: MDB_dbi, _ key: Data) throws -> Data? {
        try key.withMDBVal { keyVal in
            var value = MDB_val()
            let code = mdb_get(handle, dbi, &keyVal, &value)
            if code == MDB_NOTFOUND { return nil }
            try check(code, "could not read a value")
            return value.copiedData
        }
    }

    /// Stores `value` at `key`. Returns `false` instead of throwing when `flags` has `MDB_NOOVERWRITE` or
    /// `MDB_NODUPDATA` and the key (or pair) exists.
    @discardableResult
    func put(_ dbi: MDB_dbi, _ key: Data, _ value: Data, flags: Int32 = 0) throws -> Bool {
        try value.withUnsafeBytes { try put(dbi, key, bytes: $0, flags: flags) }
    }

    /// ``put(_:_:_:flags:)`` of bytes LMDB copies before returning.
    @discardableResult
    func put(_ dbi: MDB_dbi, _ key: Data, bytes: UnsafeRawBufferPointer, flags: Int32 = 0) throws -> Bool {
        try key.withUnsafeBytes { try put(dbi, keyBytes: $0, bytes: bytes, flags: flags) }
    }

    /// ``put(_:_:_:flags:)`` of a key and value LMDB copies before returning.
    @discardableResult
    func put(_ dbi: MDB_dbi, keyBytes: UnsafeRawBufferPointer, bytes: UnsafeRawBufferPointer, flags: Int32 = 0) throws
        -> Bool
    {
        record(key: keyBytes.count, value: bytes.count)
        noteChange(dbi)
        // Measured, not stored: the write is rolled back whatever happens next.
        guard !sawMapFull else { return true }
        var keyVal = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
        var valueVal = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        let code = mdb_put(handle, dbi, &keyVal, &valueVal, UInt32(flags))
        if code == MDB_KEYEXIST { return false }
        if code == MDB_MAP_FULL {
            sawMapFull = true
            return true
        }
        try check(code, "could not write a value")
        return true
    }

    /// Deletes `key` (or, in a sorted-duplicates database, the pair `key`/`value`); returns whether it existed.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: Data, value: Data? = nil) throws -> Bool {
        // A delete copies the pages it changes: measured like a small write (so a stepped write counts it too).
        record(key: key.count, value: 0)
        noteChange(dbi)
        guard !sawMapFull else { return true }
        return try key.withMDBVal { keyVal in
            let code: Int32
            if let value {
                code = try value.withMDBVal { valueVal in mdb_del(handle, dbi, &keyVal, &valueVal) }
            } else {
                code = mdb_del(handle, dbi, &keyVal, nil)
            }
            if code == MDB_NOTFOUND { return false }
            try check(code, "could not delete a value")
            return true
        }
    }

    /// Calls `body` with the bytes stored at `key`, or returns `nil` when there are none.
    ///
    /// The bytes are LMDB's own, in the map: valid only inside `body`, which copies what it keeps and must not
    /// write in this transaction. Reading in place saves a copy of every value read.
    func withValue<R>(_ dbi: MDB_dbi, _ key: Data, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withMDBVal { keyVal in
            var value = MDB_val()
            let code = mdb_get(handle, dbi, &keyVal, &value)
            if code == MDB_NOTFOUND { return nil }
            try check(code, "could not read a value")
            return try body(value.bytes)
        }
    }

    /// Calls `body` with each key and value of `dbi` in key order; `body` returns `false` to stop.
    ///
    /// The bytes are LMDB's own, valid only during that call of `body`: it copies what it keeps. It may write in
    /// this transaction once it has copied them (LMDB keeps the cursor of a write transaction in step).
    func forEach(_ dbi: MDB_dbi, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        try withCursor(dbi) { cursor in
            var key = MDB_val()
            var value = MDB_val()
            var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
            while code == MDB_SUCCESS {
                guard try body(key.bytes, value.bytes) else { return }
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if code != MDB_NOTFOUND { try check(code, "could not iterate") }
        }
    }

    /// Calls `body` with each key and value of `dbi` from the first key at or after `start`, in key order; `body`
    /// returns `false` to stop. The bytes are LMDB's own, valid only during that call; `body` must not write.
    func forEach(
        _ dbi: MDB_dbi, from start: Data, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try withCursor(dbi) { cursor in
            var key = MDB_val()
            var value = MDB_val()
            var code = try start.withMDBVal { startVal in
                key = startVal
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
            while code == MDB_SUCCESS {
                guard try body(key.bytes, value.bytes) else { return }
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
            if code != MDB_NOTFOUND { try check(code, "could not iterate") }
        }
    }

    /// The first key of `dbi` after `after` (the first key when `nil`) and its value, both copied out; `nil` past the
    /// last key. A walk made of these calls holds no cursor between records, so it may span the steps of a
    /// ``SteppedWrite`` and the map's growth between them; each call finds the next key as the database is then.
    func record(_ dbi: MDB_dbi, after: Data?) throws -> (key: Data, value: Data)? {
        try withCursor(dbi) { cursor in try seek(cursor, after: after) }
    }

    /// Moves `cursor` to the first key after `after` (the first key when `nil`): that key and its value, copied out,
    /// or `nil` past the last key.
    func seek(_ cursor: OpaquePointer, after: Data?) throws -> (key: Data, value: Data)? {
        var key = MDB_val()
        var value = MDB_val()
        var code: Int32
        if let after {
            code = try after.withMDBVal { start in
                key = start
                return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
            }
            // MDB_SET_RANGE stops at `after` itself when it is still there.
            if code == MDB_SUCCESS, key.bytes.elementsEqual(after) {
                code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
            }
        } else {
            code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        }
        if code == MDB_NOTFOUND { return nil }
        try check(code, "could not iterate")
        return (key.copiedData, value.copiedData)
    }

    /// Moves `cursor` to the next key: that key and its value, copied out, or `nil` past the last key.
    func next(_ cursor: OpaquePointer) throws -> (key: Data, value: Data)? {
        var key = MDB_val()
        var value = MDB_val()
        let code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        if code == MDB_NOTFOUND { return nil }
        try check(code, "could not iterate")
        return (key.copiedData, value.copiedData)
    }

    /// The values stored under `key` in a sorted-duplicates (`MDB_DUPSORT`) database. Only for those: elsewhere
    /// `MDB_NEXT_DUP` moves on to the next key.
    func duplicates(_ dbi: MDB_dbi, _ key: Data) throws -> [Data] {
        try withCursor(dbi) { cursor in
            try key.withMDBVal { keyVal in
                var value = MDB_val()
                var code = mdb_cursor_get(cursor, &keyVal, &value, MDB_SET_KEY)
                var found: [Data] = []
                while code == MDB_SUCCESS {
                    found.append(value.copiedData)
                    code = mdb_cursor_get(cursor, &keyVal, &value, MDB_NEXT_DUP)
                }
                if code != MDB_NOTFOUND { try check(code, "could not read duplicates") }
                return found
            }
        }
    }

    /// Removes every key of `dbi`, keeping the database.
    func empty(_ dbi: MDB_dbi) throws {
        noteChange(dbi)
        try check(mdb_drop(handle, dbi, 0), "could not empty a database")
    }

    /// The number of keys in `dbi`.
    func count(_ dbi: MDB_dbi) throws -> Int {
        var stat = MDB_stat()
        try check(mdb_stat(handle, dbi, &stat), "could not count")
        return stat.ms_entries
    }

    /// A cursor that lives exactly as long as `body`: closed before the transaction can end, as read-only
    /// transactions require.
    func withCursor<R>(_ dbi: MDB_dbi, _ body: (OpaquePointer) throws -> R) throws -> R {
        let cursor = try openCursor(dbi)
        defer { closeCursor(cursor) }
        return try body(cursor)
    }

    /// Opens a cursor on `dbi`, counted in ``openCursors`` until ``closeCursor(_:)``, which must come before the
    /// transaction ends (a write transaction's commit frees its cursors).
    func openCursor(_ dbi: MDB_dbi) throws -> OpaquePointer {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(handle, dbi, &cursor), "could not open a cursor")
        guard let cursor else { throw PersistenceError(.backend, "LMDB returned no cursor") }
        openCursors += 1
        return cursor
    }

    func closeCursor(_ cursor: OpaquePointer) {
        mdb_cursor_close(cursor)
        openCursors -= 1
    }
}

extension MDB_val {
    /// The bytes in place (see ``Transaction/withValue(_:_:_:)`` for how long they stay valid).
    @inline(__always)
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_data == nil ? 0 : mv_size) }

    /// The bytes, copied into memory Swift owns.
    @inline(__always)
    var copiedData: Data {
        guard let data = mv_data, mv_size > 0 else { return Data() }
        return Data(bytes: data, count: mv_size)
    }
}

extension Data {
    /// Runs `body` with an `MDB_val` pointing at these bytes (valid only inside `body`).
    @inline(__always)
    func withMDBVal<R>(_ body: (inout MDB_val) throws -> R) throws -> R {
        try withUnsafeBytes { bytes in
            var value = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return try body(&value)
        }
    }
}

/// What a write asked LMDB to store: enough to size the map for it. Small values share pages (a node is a 10-byte
/// header, the key and the value); a value over half a page goes to overflow pages of its own.
struct WriteDemand {
    private(set) var puts = 0
    /// Bytes of nodes on shared pages.
    private(set) var nodeBytes = 0
    /// Bytes of values on overflow pages, rounded up to whole pages.
    private(set) var overflowBytes = 0

    mutating func record(key: Int, value: Int) {
        puts &+= 1
        if value > 2_040 {
            nodeBytes &+= 10 &+ key &+ 8
            overflowBytes &+= (value &+ 16 &+ 4_095) & ~4_095
        } else {
            nodeBytes &+= 10 &+ key &+ value
        }
    }

    /// Bytes of map the write needs beyond what the store uses: pages split to half full in the worst case, every
    /// page of the tree copied once (LMDB writes copies, never in place), and branch pages above them.
    var mapBytes: Int {
        let (doubled, overflowA) = nodeBytes.multipliedReportingOverflow(by: 3)
        let (total, overflowB) = doubled.addingReportingOverflow(overflowBytes)
        return overflowA || overflowB ? .max : total
    }

    /// ``mapBytes`` plus a page for every put: the most the write can need when each put changes a page of its own
    /// (random keys, as in an index, copy a whole page for a small entry).
    func worstCaseBytes(pageSize: Int) -> Int {
        let (pages, overflowA) = puts.multipliedReportingOverflow(by: pageSize)
        let (total, overflowB) = mapBytes.addingReportingOverflow(pages)
        return overflowA || overflowB ? .max : total
    }
}
