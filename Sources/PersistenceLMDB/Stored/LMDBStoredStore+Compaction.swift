internal import CLMDB
package import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension LMDBStoredStore {
    /// The sizes of a store's data file before and after a compaction.
    package struct Compaction: Sendable {
        package var bytesBefore: Int64
        package var bytesAfter: Int64
    }

    /// Rewrites the store at `file` without its free pages, in place, all or nothing.
    ///
    /// LMDB copies the last committed snapshot with `mdb_env_copy2(…, MDB_CP_COMPACT)` into a temporary file beside
    /// the store (walking every page: a page leak or a damaged tree fails the copy); the copy is synced, checked to
    /// hold byte for byte the same keys and values in the same named databases as the store (sealed values
    /// included, so an encrypted store needs no passphrase), then given to `checkCopy` (the tool compares content
    /// hashes there), and finally renamed over the store and the directory synced. Any failure removes the copy and
    /// leaves the store as it was.
    ///
    /// **Exclusive use.** The store must not be open in any other process: a process holding it open across the
    /// rename would go on using the old, unlinked file. Every LMDB process holds a shared `fcntl` lock on the lock
    /// file while its environment is open, so this is checked before the copy and again just before the rename
    /// (`storeInUse`), and the write lock is held throughout, so no other process commits meanwhile. What remains is
    /// a process that opens the store in the microseconds between the last check and the rename.
    ///
    /// - Parameters:
    ///   - file: The store's data file.
    ///   - checkCopy: Called with the finished copy before it replaces the store; throwing abandons the compaction.
    /// - Throws: `PersistenceError` — `notFound`; `storeInUse`; `invalidSchema` for an LMDB file Persistence did
    ///   not create; `corrupt` when the copy doesn't match; `storageFull`; `ioFailure`; or what `checkCopy` throws.
    package static func compact(file: URL, checkCopy: (URL) throws -> Void) throws -> Compaction {
        let before = StoredStoreSize.fileSize(file)
        let session = try MaintenanceSession(file: file)
        defer { session.close() }
        try session.requireExclusive("compacting it")
        let environment = session.environment
        let temporary = NewStoreFile.temporary(for: file)
        defer { removeCopy(temporary) }
        try environment.writer.withLock {
            // The write lock, taken and never committed: no other process can commit while the copy is made.
            let transaction = try Transaction(environment: environment, readOnly: false)
            defer { transaction.abort() }
            let meta = try MaintenanceSession.meta(file, transaction)
            _ = try MaintenanceSession.keyState(file, meta, transaction)
            try LMDBError.check(
                mdb_env_copy2(environment.handle, temporary.path, UInt32(MDB_CP_COMPACT)),
                "could not write the compacted copy of \(file.path)")
            try syncCopy(temporary, like: file)
            try compareCopy(temporary, with: transaction)
            try checkCopy(temporary)
            try session.requireExclusive("compacting it")
            guard rename(temporary.path, file.path) == 0 else {
                throw PersistenceError(
                    .ioFailure, "the compacted copy could not replace \(file.path)", nativeCode: errno,
                    nativeMessage: String(cString: strerror(errno)))
            }
            syncDirectory(of: file)
        }
        return Compaction(bytesBefore: before, bytesAfter: StoredStoreSize.fileSize(file))
    }

    /// Makes the copy durable and gives it the store's permissions (LMDB creates it with 0666 less the umask).
    static func syncCopy(_ copy: URL, like file: URL) throws {
        let descriptor = open(copy.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PersistenceError(.ioFailure, "the compacted copy could not be reopened", nativeCode: errno)
        }
        defer { closeDescriptor(descriptor) }
        if let mode = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.posixPermissions] as? Int {
            _ = fchmod(descriptor, mode_t(mode & 0o7777))
        }
        guard fsync(descriptor) == 0 else {
            throw PersistenceError(.ioFailure, "the compacted copy could not be synced to disk", nativeCode: errno)
        }
    }

    static func removeCopy(_ copy: URL) {
        try? FileManager.default.removeItem(at: copy)
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: copy.path + "-lock"))
    }

    /// Checks that the copy holds exactly the store's named databases, each with the same flags and the same keys
    /// and values byte for byte, in the same order.
    /// - Throws: `corrupt` at the first difference.
    private static func compareCopy(_ copy: URL, with original: Transaction) throws {
        let environment = try Environment(
            readOnlyPath: copy.path, lockFile: false, maximumDatabases: MaintenanceSession.maximumDatabases)
        defer { try? environment.close() }
        let transaction = try Transaction(environment: environment, readOnly: true)
        defer { transaction.abort() }
        let names = try databaseNames(original)
        guard try databaseNames(transaction) == names else {
            throw PersistenceError(.corrupt, "the compacted copy does not have the store's databases")
        }
        for name in names {
            let pair = try (namedDatabase(name, original), namedDatabase(name, transaction))
            switch pair {
            case (let left?, let right?):
                guard try flags(left, original) == flags(right, transaction),
                    try sameEntries(left, original, right, transaction)
                else { throw PersistenceError(.corrupt, "the compacted copy's '\(name)' differs from the store's") }
            case (nil, nil):
                // A plain record of the main database, not a database: its value is compared.
                guard try original.get(mainDatabase(original), name) == transaction.get(mainDatabase(transaction), name)
                else { throw PersistenceError(.corrupt, "the compacted copy's main database differs from the store's") }
            default:
                throw PersistenceError(.corrupt, "the compacted copy's '\(name)' is not of the store's kind")
            }
        }
    }

    /// The keys of the main database: the named databases' names (and any plain record's key).
    private static func databaseNames(_ transaction: Transaction) throws -> [Data] {
        var names: [Data] = []
        try transaction.forEach(try mainDatabase(transaction)) { key, _ in
            names.append(Data(key))
            return true
        }
        return names
    }

    private static func mainDatabase(_ transaction: Transaction) throws -> MDB_dbi {
        var dbi = MDB_dbi()
        try LMDBError.check(mdb_dbi_open(transaction.handle, nil, 0, &dbi), "could not open the main database")
        return dbi
    }

    /// A named database, never created; `nil` when the main database's record of that name is not a database.
    private static func namedDatabase(_ name: Data, _ transaction: Transaction) throws -> MDB_dbi? {
        var dbi = MDB_dbi()
        let text = String(decoding: name, as: UTF8.self)
        guard Data(text.utf8) == name else { return nil }
        let code = mdb_dbi_open(transaction.handle, text, 0, &dbi)
        if code == MDB_INCOMPATIBLE { return nil }
        try LMDBError.check(code, "could not open '\(text)'")
        return dbi
    }

    private static func flags(_ dbi: MDB_dbi, _ transaction: Transaction) throws -> UInt32 {
        var flags: UInt32 = 0
        try LMDBError.check(mdb_dbi_flags(transaction.handle, dbi, &flags), "could not read a database's flags")
        return flags
    }

    /// Whether two databases hold the same keys and values (duplicates included) in the same order.
    private static func sameEntries(
        _ left: MDB_dbi, _ leftTransaction: Transaction, _ right: MDB_dbi, _ rightTransaction: Transaction
    ) throws -> Bool {
        try leftTransaction.withCursor(left) { leftCursor in
            try rightTransaction.withCursor(right) { rightCursor in
                var operation = MDB_FIRST
                while true {
                    var leftKey = MDB_val()
                    var leftValue = MDB_val()
                    var rightKey = MDB_val()
                    var rightValue = MDB_val()
                    let leftCode = mdb_cursor_get(leftCursor, &leftKey, &leftValue, operation)
                    let rightCode = mdb_cursor_get(rightCursor, &rightKey, &rightValue, operation)
                    operation = MDB_NEXT
                    guard leftCode == rightCode else { return false }
                    if leftCode == MDB_NOTFOUND { return true }
                    try LMDBError.check(leftCode, "could not read a database")
                    guard leftKey.bytes.elementsEqual(rightKey.bytes), leftValue.bytes.elementsEqual(rightValue.bytes)
                    else { return false }
                }
            }
        }
    }
}
