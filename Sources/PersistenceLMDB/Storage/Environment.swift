internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// Owns one `MDB_env` and everything process-wide about it: the writer lock, the map-growth lock, the named
/// databases opened so far.
///
/// LMDB allows one environment per file per process, so ``EnvironmentRegistry`` shares one among every database
/// opened on the same path. `@unchecked Sendable`: the handle is thread-safe under `MDB_NOTLS` for read
/// transactions; write transactions run under ``writer``; `mdb_env_set_mapsize` runs only under the growth lock
/// held exclusively, when no transaction of this process is open; `databases` is guarded by its own lock.
final class Environment: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    /// Serializes write transactions (one writer at a time, and no nested write on one thread).
    let writer = WriterLock()
    /// Held shared by every transaction, exclusively while the map grows.
    let growth = ReadWriteLock()
    private let databaseLock = NSLock()
    private var databases: [String: MDB_dbi] = [:]
    /// The largest key LMDB stores (511 bytes in the default build).
    let maximumKeySize: Int
    /// How many read transactions of this environment the calling thread has open.
    private let readDepth = ThreadCounter()
    /// Where commits are published to observers: one per environment, so every database of this process on the
    /// file shares it.
    let observationHub = ObservationHub()
    /// The id of the last write transaction this process committed or noticed (0 before the first); read and
    /// written under ``writer``.
    let lastTransactionID = Atomic<Int>(0)
    /// How many databases (and openings under way) use the environment; read and written only under
    /// ``EnvironmentRegistry``'s lock.
    var users = 0
    /// Set when ``close()`` begins: new transactions then throw `closed`.
    private let isClosed = Atomic<Bool>(false)
    /// Set once `mdb_env_close` has run.
    private let isHandleClosed = Atomic<Bool>(false)
    /// Read transactions ended with `mdb_txn_reset`, kept with their reader slots so that the next reads begin with
    /// `mdb_txn_renew` (``Transaction/init(readingFrom:)``); at most ``idleReaderLimit``, guarded by their lock.
    private var idleReaders: [OpaquePointer] = []
    private let idleReaderLock = NSLock()
    /// How many idle read handles are kept: each holds one of the lock file's reader slots (`maximumReaders`, shared
    /// by every process), so a few — 3 of the default 126 — and none for a table of fewer than 32.
    private let idleReaderLimit: Int
    /// The nonce counter after the last write of this process that sealed values, committed or not: a rolled-back
    /// write's nonces are never handed out again (its pages may have reached the file).
    private let nonceHighWater = Atomic<UInt64>(0)

    /// Whether each write's commit is followed by `F_FULLFSYNC` (``LMDBBuilder/fullFsync``).
    let fullFsync: Bool

    /// Opens the environment of the file at `path` (with `path-lock` beside it).
    ///
    /// When the system refuses the map (`ENOMEM`: a limited address space), opens with half the size, down to the
    /// 1 MiB the builder accepts at least: a smaller map only means earlier growth.
    /// - Parameters:
    ///   - semaphorePrefix: ``LMDBBuilder/semaphorePrefix``, already validated.
    ///   - fullFsync: ``LMDBBuilder/fullFsync``.
    convenience init(
        path: String, mapSize: Int, maximumReaders: Int, maximumDatabases: Int, semaphorePrefix: String? = nil,
        fullFsync: Bool = false
    ) throws {
        var size = mapSize
        while true {
            do {
                try self.init(
                    path: path, exactMapSize: size, maximumReaders: maximumReaders,
                    maximumDatabases: maximumDatabases, semaphorePrefix: semaphorePrefix, fullFsync: fullFsync)
                return
            } catch let error as PersistenceError where error.nativeCode == ENOMEM && size / 2 >= 1 << 20 {
                size /= 2
            }
        }
    }

    /// How an environment opens its file.
    enum Access {
        /// Reads and writes, with the lock file beside the store (created when missing).
        case readWrite
        /// Reads only (`MDB_RDONLY`): the data file is opened read-only and never written. With `lockFile`, readers
        /// register in the existing lock file, so other processes' writers keep their snapshot's pages; without it
        /// (`MDB_NOLOCK`), nothing at all is created or written, and the caller answers for concurrent writers.
        case readOnly(lockFile: Bool)
    }

    /// Opens the environment of the file at `path` read-only (see ``Access/readOnly(lockFile:)``), with the map
    /// size the file records: for reading a store without writing a byte of it (``LMDBStoredStore``).
    /// - Parameter semaphorePrefix: As ``LMDBBuilder/semaphorePrefix`` (validated): the app group of an app that
    ///   shares the store, used when this process is the first to open it.
    convenience init(
        readOnlyPath path: String, lockFile: Bool, maximumDatabases: Int, semaphorePrefix: String? = nil
    ) throws {
        try self.init(
            path: path, exactMapSize: nil, maximumReaders: 126, maximumDatabases: maximumDatabases,
            access: .readOnly(lockFile: lockFile), semaphorePrefix: semaphorePrefix)
    }

    private init(
        path: String, exactMapSize mapSize: Int?, maximumReaders: Int, maximumDatabases: Int,
        access: Access = .readWrite, semaphorePrefix: String? = nil, fullFsync: Bool = false
    ) throws {
        var env: OpaquePointer?
        var creates = false
        try LMDBError.check(mdb_env_create(&env), "could not create an LMDB environment")
        guard let env else { throw PersistenceError(.backend, "LMDB returned no environment") }
        // lmdb.h, mdb_env_open: "If this function fails, mdb_env_close() must be called to discard the MDB_env
        // handle." The same holds for every set-up call before it, so any failure below closes the handle.
        do {
            // Without a size, LMDB maps what the file records (at least its used pages).
            if let mapSize { try LMDBError.check(mdb_env_set_mapsize(env, mapSize), "could not set the map size") }
            try LMDBError.check(mdb_env_set_maxreaders(env, UInt32(maximumReaders)), "could not set the readers")
            try LMDBError.check(mdb_env_set_maxdbs(env, MDB_dbi(maximumDatabases)), "could not set the databases")
            if let semaphorePrefix {
                try LMDBError.check(
                    persistence_lmdb_set_semaphore_prefix(env, semaphorePrefix), "could not set the semaphore prefix")
            }
            // MDB_NOTLS: read transactions are not tied to threads (async reads hop threads, and a thread may read
            // while it writes). MDB_NOSUBDIR: the store is one file, not a directory. Never MDB_NOMEMINIT: pages
            // could carry stale heap memory to disk.
            var flags = UInt32(MDB_NOTLS | MDB_NOSUBDIR)
            if case .readOnly(let lockFile) = access {
                flags |= UInt32(MDB_RDONLY) | (lockFile ? 0 : UInt32(MDB_NOLOCK))
            }
            // A store file this opening creates: made durable, then its name (below).
            if case .readWrite = access { creates = !FileManager.default.fileExists(atPath: path) }
            let code = mdb_env_open(env, path, flags, 0o600)
            if code == MDB_VERSION_MISMATCH, Self.lockFileIsHeld(path + "-lock") { throw Self.otherLockingBuild(path) }
            try LMDBError.check(code, "could not open the store file")
        } catch {
            mdb_env_close(env)
            throw error
        }
        // Free reader slots left by processes that died mid-read, so they can't pin old pages or fill the table.
        // (Not when reading only: that writes to the lock file, which a read-only opening leaves to the writers.)
        if case .readWrite = access {
            var stale: Int32 = 0
            _ = mdb_reader_check(env, &stale)
        }
        // LMDB syncs the file at each commit, never the directory: without this, a power cut could take the new
        // file's name — and every commit in it — with it, on file systems that don't journal names in order.
        if creates {
            _ = mdb_env_sync(env, 1)
            syncDirectory(of: URL(fileURLWithPath: path))
        }
        handle = env
        self.path = path
        self.fullFsync = fullFsync
        idleReaderLimit = min(4, maximumReaders / 32)
        maximumKeySize = Int(mdb_env_get_maxkeysize(env))
    }

    /// Whether a live process has the lock file open as LMDB does (a shared `fcntl` lock on its first byte).
    private static func lockFileIsHeld(_ lockPath: String) -> Bool {
        let descriptor = open(lockPath, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        defer { try? file.close() }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        return fcntl(descriptor, F_GETLK, &lock) == 0 && lock.l_type != Int16(F_UNLCK)
    }

    /// `MDB_VERSION_MISMATCH` with the lock file held by a live process: its LMDB locks otherwise than this build's
    /// (robust mutexes in the system's liblmdb; guarded POSIX semaphores in the vendored LMDB), so the two can't
    /// share the store at the same time. Not damage: the store opens once that process closes it.
    private static func otherLockingBuild(_ path: String) -> PersistenceError {
        PersistenceError(
            .busy,
            "the store is open in another process whose LMDB locks in another way (the system's liblmdb and the "
                + "vendored LMDB of Apple's platforms and the VendoredLibraries build can't share a store at the same "
                + "time): close it there, then open it again",
            nativeCode: MDB_VERSION_MISMATCH, nativeMessage: "MDB_VERSION_MISMATCH: lock file format of another build")
    }

    /// Whether this build's LMDB can prefix its semaphore names (``LMDBBuilder/semaphorePrefix``): the vendored
    /// LMDB (Apple's platforms, and the `VendoredLibraries` build) can; the system's liblmdb can't.
    static var supportsSemaphorePrefix: Bool { persistence_lmdb_has_semaphore_prefix() == 1 }

    /// How many reader slots of this process hold a read transaction now, from `mdb_reader_list` (a line per slot in
    /// use: pid, thread, and the snapshot it reads or `-` for none): for tests that no transaction outlives its block.
    func readTransactionsOfThisProcess() -> Int { readerSlotsOfThisProcess().reading }

    /// This process's reader slots: those holding a snapshot, and those kept idle (``keepIdleReader(_:)``).
    func readerSlotsOfThisProcess() -> (reading: Int, idle: Int) {
        final class Lines { var lines: [String] = [] }
        let collected = Lines()
        _ = withExtendedLifetime(collected) {
            mdb_reader_list(
                handle,
                { message, context in
                    guard let message, let context else { return 0 }
                    Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().lines.append(String(cString: message))
                    return 0
                }, Unmanaged.passUnretained(collected).toOpaque())
        }
        let pid = String(getpid())
        let mine = collected.lines.map { $0.split(whereSeparator: \.isWhitespace) }.filter {
            $0.count == 3 && $0[0] == pid
        }
        let idle = mine.count { $0[2] == "-" }
        return (mine.count - idle, idle)
    }

    /// The value of the named POSIX semaphore (1: free, 0: held), or `nil` when it can't be read: for tests, on Linux,
    /// of the vendored LMDB's locks.
    static func semaphoreValue(named name: String) -> Int? {
        var value: Int32 = -1
        return persistence_semaphore_value(name, &value) == 0 ? Int(value) : nil
    }

    /// Whether ``flushDriveCache()`` does anything here: where `F_FULLFSYNC` exists (Apple's platforms).
    static var hasFullFsync: Bool { persistence_has_full_fsync() == 1 }

    /// Asks the drive to write its cache to the medium, after a commit (``LMDBBuilder/fullFsync``). The commit is
    /// done whatever happens here, so a failure (a file system without `F_FULLFSYNC`) falls back to `fsync`, as
    /// SQLite's `fullfsync` does, and is not reported: the write's outcome is not in doubt, only its survival of a
    /// power loss.
    func flushDriveCache() {
        var descriptor: mdb_filehandle_t = -1
        guard mdb_env_get_fd(handle, &descriptor) == 0, descriptor >= 0 else { return }
        if persistence_full_fsync(descriptor) != 0 { _ = fsync(descriptor) }
    }

    deinit {
        if !isHandleClosed.load(ordering: .acquiring) {
            for reader in takeIdleReaders() { mdb_txn_abort(reader) }
            mdb_env_close(handle)
        }
    }

    /// Refuses new transactions, waits for those under way to end, then closes the handle; later transactions
    /// throw `closed`. Only ``EnvironmentRegistry`` calls it, for the last user.
    ///
    /// New transactions are refused first, so a read under way that starts a write gets `closed` instead of waiting
    /// for this close while it waits for the read.
    /// - Throws: `nestedTransaction` inside one of the environment's transactions on this thread.
    func close() throws {
        guard readDepth.value == 0, !writer.isHeldByCurrentThread else {
            throw PersistenceError(.nestedTransaction, "a database can't be closed inside its own transaction")
        }
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try writer.withLock {
            growth.withExclusive {
                // No read is under way (the growth lock is held exclusively): the kept handles end before the
                // environment does (lmdb.h: every transaction must end before mdb_env_close).
                for reader in takeIdleReaders() { mdb_txn_abort(reader) }
                mdb_env_close(handle)
                isHandleClosed.store(true, ordering: .releasing)
            }
        }
    }

    /// Throws `closed` once the handle is closed; called with the growth lock held shared, so it can't close meanwhile.
    func checkOpen() throws {
        guard !isClosed.load(ordering: .acquiring) else {
            throw PersistenceError(.closed, "the database was closed")
        }
    }

    /// The first nonce counter a write may use: past every nonce this process handed out, committed or not.
    func nonceStart(persisted: UInt64) -> UInt64 { max(persisted, nonceHighWater.load(ordering: .acquiring)) }

    /// Notes the nonce counter a write reached, whether or not it commits.
    func noteNonces(upTo counter: UInt64) {
        var current = nonceHighWater.load(ordering: .acquiring)
        while current < counter {
            let (exchanged, original) = nonceHighWater.compareExchange(
                expected: current, desired: counter, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = original
        }
    }

    /// Runs `body` in a read-only transaction.
    func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        while true {
            do {
                return try growth.withShared {
                    try checkOpen()
                    let transaction = try Transaction(readingFrom: self)
                    defer { transaction.abort() }
                    readDepth.increment()
                    defer { readDepth.decrement() }
                    return try body(transaction)
                }
            } catch is LMDBError.MapResized {
                try adoptResizedMap()
            }
        }
    }

    /// An idle read handle to renew, if one is kept.
    func takeIdleReader() -> OpaquePointer? {
        idleReaderLock.lock()
        defer { idleReaderLock.unlock() }
        return idleReaders.popLast()
    }

    /// Keeps a reset read handle for the next read, or ends it when enough are kept or the environment is closing.
    func keepIdleReader(_ reader: OpaquePointer) {
        idleReaderLock.lock()
        let kept = idleReaders.count < idleReaderLimit && !isClosed.load(ordering: .acquiring)
        if kept { idleReaders.append(reader) }
        idleReaderLock.unlock()
        if !kept { mdb_txn_abort(reader) }
    }

    /// Every idle read handle, no longer kept.
    private func takeIdleReaders() -> [OpaquePointer] {
        idleReaderLock.lock()
        defer { idleReaderLock.unlock() }
        defer { idleReaders.removeAll() }
        return idleReaders
    }

    /// Runs `body` once in a write transaction, committing when it returns. The caller holds ``writer``.
    ///
    /// `body` is never run twice: LMDB can't grow the map while a transaction is open, so the map is grown *ahead*
    /// of need before the transaction begins (see ``growAheadOfNeed(reservingMultipleOfUsed:instrumentation:)``). A write that still fills the map is
    /// rolled back whole and throws `storageFull` (the map is grown for the next attempt); re-running the block
    /// instead would repeat its side effects and lose what a single-pass sequence had already handed over.
    ///
    /// - Parameter reservingMultipleOfUsed: Grow the map ahead so that this many times the store's used size is
    ///   free besides (a migration that rewrites every record); 0 for the usual half-free rule.
    func write<R>(
        reservingMultipleOfUsed: Int = 0, instrumentation: Instrumentation = .off, _ body: (Transaction) throws -> R
    ) throws -> R {
        try growAheadOfNeed(reservingMultipleOfUsed: reservingMultipleOfUsed, instrumentation: instrumentation)
        while true {
            do {
                return try growth.withShared {
                    try checkOpen()
                    // Throws MapResized before `body` has run, the only case that begins again.
                    let transaction = try Transaction(environment: self, readOnly: false)
                    noticeExternalCommits(lastCommitted: transaction.id - 1)
                    do {
                        let result = try body(transaction)
                        // `body` may have caught the failure itself: the transaction is unusable all the same.
                        if transaction.sawMapFull { throw LMDBError.MapFull(demand: transaction.demand) }
                        let id = transaction.id
                        try transaction.commit()
                        lastTransactionID.store(id, ordering: .relaxed)
                        return result
                    } catch {
                        transaction.abort()
                        if transaction.sawMapFull { throw LMDBError.MapFull(demand: transaction.demand) }
                        // A MapResized from inside `body` (another store's) must not run `body` again.
                        if error is LMDBError.MapResized {
                            throw PersistenceError(.backend, "a map was resized during the write")
                        }
                        throw error
                    }
                }
            } catch is LMDBError.MapResized {
                // Nothing of `body` has run yet: adopt the other process's map size and begin again.
                try adoptResizedMap()
            } catch let full as LMDBError.MapFull {
                // Outside the shared hold: growing takes the growth lock exclusively.
                throw mapFull(full.demand, instrumentation)
            }
        }
    }

    /// The error of a write that filled the map, after growing the map for the next attempt when this thread has
    /// no read open (growing waits for every transaction of the process to end): to fit what the store uses plus
    /// what the whole write asked to store (``WriteDemand``, measured to the end of the block — or to its first read
    /// after the map filled), at least double. A write that only writes then fits at its next attempt.
    func mapFull(_ demand: WriteDemand, _ instrumentation: Instrumentation) -> PersistenceError {
        var grown = false
        if readDepth.value == 0 {
            grown =
                (try? growth.withExclusive {
                    let used = try usedBytes()
                    let (fitting, overflow) = used.addingReportingOverflow(demand.mapBytes)
                    let target = max(2 * currentMapSize, overflow ? .max : fitting)
                    try grow(toAtLeast: target, instrumentation: instrumentation)
                    return true
                }) == true
        }
        return PersistenceError(
            .storageFull,
            "the write needed more than the map's free space and was rolled back; nothing of it was stored"
                + (grown
                    ? "; the map has grown to \(mapSize) bytes, so the write can be run again"
                    : "; start the write outside any read block so the map can grow"),
            nativeCode: MDB_MAP_FULL, nativeMessage: "MDB_MAP_FULL: Environment mapsize limit reached")
    }

    /// Grows the map before a write begins so that at least half of it is free, and at least `bytes` (a step of a
    /// ``SteppedWrite`` about to write a large value): with the default map (address space, not disk) this never
    /// happens; with a small ``LMDBBuilder/initialMapSize`` it keeps ordinary writes from filling the map.
    /// `mdb_env_set_mapsize` needs every transaction of this process closed — it remaps the file, and a cursor still
    /// open would read pages no longer mapped — so it waits for open reads; a read open on this very thread would
    /// wait for itself, and then the map is left as it is. The caller holds no transaction.
    func growAheadOfNeed(
        reservingMultipleOfUsed multiple: Int, reservingBytes bytes: Int = 0, instrumentation: Instrumentation
    ) throws {
        try checkOpen()
        guard readDepth.value == 0 else { return }
        let used = try usedBytes()
        let multiplied = used.multipliedReportingOverflow(by: max(2, multiple + 1))
        let reserved = used.addingReportingOverflow(bytes)
        // A reservation past the largest size makes the growth below throw `storageFull`.
        let needed = max(
            multiplied.overflow ? 0 : multiplied.partialValue, reserved.overflow ? .max : reserved.partialValue)
        guard needed > currentMapSize else { return }
        try growth.withExclusive { try grow(toAtLeast: needed, instrumentation: instrumentation) }
    }

    /// The bytes of the map past the store's last page, and the page size: what a write transaction begun now can
    /// store. Call with the growth lock held (a transaction open).
    func freeBytesAndPageSize() throws -> (free: Int, pageSize: Int) {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        try LMDBError.check(mdb_env_info(handle, &info), "could not read the map size")
        try LMDBError.check(mdb_env_stat(handle, &stat), "could not read the page size")
        let used = try usedBytes()
        return (max(0, info.me_mapsize - used), Int(stat.ms_psize))
    }

    /// The bytes of the map the store uses: up to its last page.
    private func usedBytes() throws -> Int {
        var info = MDB_envinfo()
        var stat = MDB_stat()
        try LMDBError.check(mdb_env_info(handle, &info), "could not read the map size")
        try LMDBError.check(mdb_env_stat(handle, &stat), "could not read the page size")
        let used = (info.me_last_pgno + 1).multipliedReportingOverflow(by: Int(stat.ms_psize))
        return used.overflow ? .max : used.partialValue
    }

    /// Sets the map to at least `size` bytes (by doubling). Call with the growth lock held exclusively.
    private func grow(toAtLeast size: Int, instrumentation: Instrumentation) throws {
        var info = MDB_envinfo()
        try LMDBError.check(mdb_env_info(handle, &info), "could not read the map size")
        var target = info.me_mapsize
        while target < size {
            let (doubled, overflow) = target.multipliedReportingOverflow(by: 2)
            guard !overflow else { throw PersistenceError(.storageFull, "the map can't grow any further") }
            target = doubled
        }
        guard target != info.me_mapsize else { return }
        try LMDBError.check(mdb_env_set_mapsize(handle, target), "could not grow the map")
        instrumentation.mapGrew(from: info.me_mapsize, to: target)
    }

    /// Adopts a map grown by another process (`MDB_MAP_RESIZED`).
    func adoptResizedMap() throws {
        guard readDepth.value == 0 else {
            throw PersistenceError(.busy, "another process grew the map while this thread has a read open")
        }
        try growth.withExclusive {
            try LMDBError.check(mdb_env_set_mapsize(handle, 0), "could not adopt the grown map")
        }
    }

    /// The handle of a named database, opening (and creating) it on first use in `transaction`.
    func database(named name: String, flags: UInt32, in transaction: Transaction) throws -> MDB_dbi {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        if let dbi = databases[name] { return dbi }
        var dbi = MDB_dbi()
        try LMDBError.check(
            mdb_dbi_open(transaction.handle, name, flags | UInt32(MDB_CREATE), &dbi), "could not open '\(name)'")
        databases[name] = dbi
        return dbi
    }

    /// Deletes the named database and its contents in `transaction` (a migration's removed entity or index);
    /// nothing when there is none.
    func dropDatabase(named name: String, in transaction: Transaction) throws {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        var dbi = MDB_dbi()
        let code = mdb_dbi_open(transaction.handle, name, 0, &dbi)
        if code == MDB_NOTFOUND { return }
        try LMDBError.check(code, "could not open '\(name)'")
        // mdb_drop with 1 deletes the database and closes its handle: forget it, so a later use opens it anew.
        try LMDBError.check(mdb_drop(transaction.handle, dbi, 1), "could not delete '\(name)'")
        databases[name] = nil
    }

    /// The names of the databases whose handles are cached.
    var openDatabaseNames: Set<String> {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        return Set(databases.keys)
    }

    /// Forgets the handles of databases opened since `known`, after the write transaction that opened them rolled
    /// back (LMDB closes them with it); later uses open them again.
    func forgetDatabaseHandles(openedSince known: Set<String>) {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        for name in databases.keys where !known.contains(name) { databases[name] = nil }
    }

    /// The handle of a database opened earlier.
    func database(named name: String) throws -> MDB_dbi {
        databaseLock.lock()
        defer { databaseLock.unlock() }
        guard let dbi = databases[name] else {
            throw PersistenceError(.backend, "the named database '\(name)' was not opened")
        }
        return dbi
    }

    /// The map's current size in bytes; 0 once closed.
    var mapSize: Int {
        growth.withShared { isHandleClosed.load(ordering: .acquiring) ? 0 : currentMapSize }
    }

    /// The map's size, for callers holding the growth lock.
    private var currentMapSize: Int {
        var info = MDB_envinfo()
        return mdb_env_info(handle, &info) == MDB_SUCCESS ? info.me_mapsize : 0
    }
}

/// A `pthread_rwlock_t` with closures.
///
/// `@unchecked Sendable`: the lock is allocated once, never moved, and pthread locks are thread-safe.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    /// Takes the lock shared until ``unlock()``: for a hold that spans more than one call (``SteppedWrite``).
    func lockShared() { pthread_rwlock_rdlock(lock) }

    func unlock() { pthread_rwlock_unlock(lock) }

    func withShared<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withExclusive<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

extension Environment {
    /// Tells every observer to read again when the last committed transaction is later than the last one this
    /// process committed or saw (another process wrote); returns whether it was. Call under ``writer``.
    @discardableResult
    func noticeExternalCommits(lastCommitted current: Int) -> Bool {
        let last = lastTransactionID.load(ordering: .relaxed)
        lastTransactionID.store(current, ordering: .relaxed)
        guard last != 0, current > last else { return false }
        observationHub.publish(.external)
        return true
    }

    /// Notices other processes' commits without writing: the environment's last committed transaction id.
    /// Call under ``writer``.
    func checkForExternalCommits() throws -> Bool {
        try checkOpen()
        var info = MDB_envinfo()
        try LMDBError.check(mdb_env_info(handle, &info), "could not read the environment's state")
        return noticeExternalCommits(lastCommitted: Int(info.me_last_txnid))
    }
}
