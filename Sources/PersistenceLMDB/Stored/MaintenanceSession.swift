internal import CLMDB
import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store opened read-write without the app's entity types, for the tool's maintenance (`rekey`, `compact`): the
/// environment an app's opening would make (the builder's map size and readers, the lock file beside the store,
/// created when missing), registered in ``StoreFiles`` like any opening, and nothing of the data file written by
/// opening it.
///
/// Not `Sendable`: one command uses it from one thread, and ends it with ``close()``.
final class MaintenanceSession {
    let file: URL
    let environment: Environment
    private let registration: StoreFiles.StoreRegistration
    /// A descriptor of the lock file, kept open until the environment is closed: closing any descriptor of a file
    /// drops every `fcntl` lock the process holds on it, LMDB's included.
    private var probe: Int32 = -1
    private var isOpen = true

    /// The most named databases a session opens (as ``LMDBStoredStore``).
    static let maximumDatabases = 4_096

    /// Opens the store at `file` read-write.
    /// - Throws: `notFound` for no file; `storeInUse` while a database of this process has it open; an LMDB error
    ///   for a file that isn't an LMDB environment or can't be opened for writing.
    /// - Parameter semaphorePrefix: As ``LMDBStoredStore/init(file:passphrase:semaphorePrefix:)``'s, validated.
    init(file: URL, semaphorePrefix: String? = nil) throws {
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.notFound, "no LMDB store at \(file.path)")
        }
        // One environment per file per process: a second one's close would drop the first one's locks.
        guard !StoreFiles.isOpen(file) else {
            throw PersistenceError(.storeInUse, "\(file.path) is open in this process: close its database first")
        }
        registration = StoreFiles.register(file)
        self.file = file
        do {
            // Read-only first: opening an empty or foreign file read-write would make it an LMDB environment.
            try Self.checkIsStore(file)
            environment = try Environment(
                path: file.path, mapSize: LMDBBuilder.defaultMapSize, maximumReaders: 126,
                maximumDatabases: Self.maximumDatabases, semaphorePrefix: semaphorePrefix)
        } catch {
            registration.end()
            throw error
        }
        probe = open(file.path + "-lock", O_RDWR | O_CLOEXEC)
    }

    deinit { close() }

    /// Closes the environment, then the lock-file probe, then ends the registration (once).
    func close() {
        guard isOpen else { return }
        isOpen = false
        try? environment.close()
        if probe >= 0 { closeDescriptor(probe) }
        probe = -1
        registration.end()
    }

    /// The process id of another process that has the store's environment open, or `nil` when none has.
    ///
    /// Every process with an LMDB environment open holds a shared `fcntl` lock on the first byte of its lock file
    /// from `mdb_env_open` to `mdb_env_close` (mdb.c, `mdb_env_excl_lock`); `F_GETLK` reports a lock that would
    /// conflict with an exclusive one, and never this process's own.
    /// - Throws: `ioFailure` when the lock file can't be asked.
    func otherProcess() throws -> pid_t? {
        guard probe >= 0 else {
            throw PersistenceError(.ioFailure, "the store's lock file \(file.path)-lock could not be opened")
        }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        guard fcntl(probe, F_GETLK, &lock) == 0 else {
            throw PersistenceError(
                .ioFailure, "the store's lock file could not be asked who uses it", nativeCode: errno,
                nativeMessage: String(cString: strerror(errno)))
        }
        return lock.l_type == Int16(F_UNLCK) ? nil : lock.l_pid
    }

    /// Throws `storeInUse` when another process has the store open.
    func requireExclusive(_ action: String) throws {
        if let pid = try otherProcess() {
            throw PersistenceError(
                .storeInUse, "\(file.path) is open in another process (pid \(pid)): close it before \(action)")
        }
    }

    /// Opens `file` read-only without the lock file, writing nothing, to check it is a Persistence store.
    private static func checkIsStore(_ file: URL) throws {
        let environment = try Environment(readOnlyPath: file.path, lockFile: false, maximumDatabases: 2)
        defer { try? environment.close() }
        let transaction = try Transaction(environment: environment, readOnly: true)
        defer { transaction.abort() }
        _ = try meta(file, transaction)
    }

    /// The meta database in `transaction`, never created.
    /// - Throws: `invalidSchema` for an LMDB file Persistence did not create.
    static func meta(_ file: URL, _ transaction: Transaction) throws -> MDB_dbi {
        var dbi = MDB_dbi()
        let code = mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &dbi)
        if code == MDB_NOTFOUND || code == MDB_INCOMPATIBLE {
            throw PersistenceError(.invalidSchema, "\(file.path) is an LMDB file Persistence did not create")
        }
        try LMDBError.check(code, "could not open the store's metadata")
        return dbi
    }

    /// The store's format and key record (`nil`: not encrypted), as committed in `transaction`.
    /// - Throws: `corrupt` for a store without a format or with a damaged key record, `unsupportedFormatVersion`.
    static func keyState(_ file: URL, _ meta: MDB_dbi, _ transaction: Transaction) throws -> (
        format: UInt64, record: StoreKeyRecord?
    ) {
        guard let format = try StoreMetadata.readNumber(.format, meta, transaction) else {
            throw PersistenceError(.corrupt, "\(file.path) has no format version: the store is damaged or unfinished")
        }
        try StoreGate.check(format: Int64(clamping: format), formats: StoreMetadata.formats)
        let keyFormat = try StoreMetadata.keyFormat(of: format, meta, transaction)
        return (format, try StoreKeyRecord.read(format: keyFormat, meta, transaction))
    }
}

/// `close(2)`, out of the way of the `close()` methods of the types that call it.
func closeDescriptor(_ descriptor: Int32) { _ = close(descriptor) }

/// Syncs the directory holding `file`, so that a name just created or renamed there survives a power cut (best
/// effort: not every file system syncs directories).
func syncDirectory(of file: URL) {
    let descriptor = open(file.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    _ = fsync(descriptor)
    closeDescriptor(descriptor)
}
