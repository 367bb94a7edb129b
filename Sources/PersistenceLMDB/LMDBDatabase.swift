internal import CLMDB
public import Foundation
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import Synchronization

/// A database in one LMDB file, made by ``LMDBBuilder``. With a passphrase, values are sealed with the cipher the
/// store was created with and records: AES-256-GCM, or XChaCha20-Poly1305 for a store created on a CPU without AES
/// instructions (stores created by versions before format 3 are AES-256-GCM wherever they were created).
///
/// Reads run concurrently with the single writer, each on a consistent snapshot. Writes are serialized and run
/// synchronously under a lock. **A write block runs exactly once**: the memory map is large by default and grows
/// ahead of need before a write begins; a write that fills it anyway is rolled back whole and throws `storageFull`
/// (nothing of it is stored, and the map has grown, so running it again can succeed) — the block is never re-run by
/// the library, so its side effects, and the elements of a single-pass sequence given to `create(_:)`, are never
/// repeated or lost. A full disk is `storageFull` too, with every committed write intact.
public final class LMDBDatabase: FileBackedDatabase, MigratingDatabase, Sendable {
    public typealias Context = LMDBContext

    /// The store's file.
    public let fileURL: URL

    public var storeFileURL: URL? { fileURL }
    /// The environment, kept for the observation hub once closed; operations reach it through ``environment``.
    private let storeEnvironment: Environment
    /// Set by `close()`.
    private let isClosed = Atomic<Bool>(false)
    /// This database's hold on its store file, ended by `close()`.
    private let registration: StoreFiles.StoreRegistration
    let stores: EntityLookup<EntityStore>
    /// The store's keys while the database is open: `close()` lets go of them, so their memory is wiped then — or
    /// when the last transaction under way ends, since each holds them too.
    private let openSealer: Mutex<ValueSealer?>
    /// Whether values are sealed with a key derived from a passphrase.
    public let isEncrypted: Bool
    /// What tests observe of the key memory (`nil` for an unencrypted store).
    package let keyMemoryProbe: KeyMemoryProbe?
    let metaDBI: MDB_dbi
    let aliasDBI: MDB_dbi
    /// Checks at each transaction's start that no other process migrated the store since it opened.
    let stamp: MigrationStamp
    let instrumentation: Instrumentation
    let runner = TransactionRunner(label: "persistence.lmdb")
    private let driver: TransactionDriver
    /// What the migration run by ``LMDBBuilder/create()`` did (blocks and declared changes), or `nil` when the store
    /// was created or was already at the builder's schema version (or only the version changed).
    public let migrationReport: MigrationReport?

    init(
        fileURL: URL, environment: Environment, registration: StoreFiles.StoreRegistration,
        stores: EntityLookup<EntityStore>, sealer: ValueSealer, metaDBI: MDB_dbi, aliasDBI: MDB_dbi,
        stamp: MigrationStamp,
        instrumentation: Instrumentation, migrationReport: MigrationReport? = nil
    ) {
        self.stamp = stamp
        driver = TransactionDriver(
            instrumentation: instrumentation, observationHub: environment.observationHub, model: stores.model)
        self.instrumentation = instrumentation
        self.migrationReport = migrationReport
        self.fileURL = fileURL
        self.storeEnvironment = environment
        self.registration = registration
        self.stores = stores
        self.openSealer = Mutex(sealer)
        self.isEncrypted = sealer.isEncrypted
        self.keyMemoryProbe = sealer.keys?.memoryProbe
        self.metaDBI = metaDBI
        self.aliasDBI = aliasDBI
    }

    deinit {
        // Released without close(): one user fewer; the environment closes its handle when it is freed.
        if !isClosed.exchange(true, ordering: .acquiringAndReleasing) {
            try? EnvironmentRegistry.release(storeEnvironment, closing: false)
        }
    }

    /// The environment, while the database is open.
    /// - Throws: `PersistenceError/Code/closed` after `close()`.
    var environment: Environment {
        get throws {
            guard !isClosed.load(ordering: .acquiring) else {
                throw PersistenceError(.closed, "the database was closed")
            }
            return storeEnvironment
        }
    }

    /// Closes the database. When it is the last database of this process on its store file, waits for the
    /// transactions under way and closes the LMDB environment, releasing the file and its `-lock` file. Later calls
    /// throw `PersistenceError/Code/closed`; closing again does nothing.
    /// - Throws: `PersistenceError/Code/nestedTransaction` when called inside a transaction of this store.
    public func close() throws {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        do {
            try EnvironmentRegistry.release(storeEnvironment, closing: true)
        } catch {
            isClosed.store(false, ordering: .releasing)
            throw error
        }
        openSealer.withLock { $0 = nil }
        registration.end()
    }

    /// Deletes the files of the LMDB store named `name` in `directory`: `<name>.lmdb` and its `-lock` file. Refused
    /// with `PersistenceError/Code/storeInUse` while a database of this process has it open.
    /// - Returns: Whether there was anything to delete.
    @discardableResult
    public static func deleteStore(named name: String, in directory: URL? = nil) throws -> Bool {
        try StoreFiles.delete(
            named: name, in: directory, fileExtension: "lmdb", companions: ["-lock", "-migration", ".sync-lock"])
    }

    /// The names of the LMDB stores (`<name>.lmdb` files) in `directory`, sorted.
    public static func storeNames(in directory: URL? = nil) throws -> [String] {
        try StoreFiles.names(in: directory, fileExtension: "lmdb")
    }

    /// Where commits are published to observers; shared by every database of this process on the same file.
    @_spi(PersistenceBackend) public var observationHub: ObservationHub { storeEnvironment.observationHub }

    @discardableResult
    public func checkForExternalChanges() throws -> Bool {
        try environment.writer.withLock { try environment.checkForExternalCommits() }
    }

    /// How values are sealed, while the database is open.
    /// - Throws: `PersistenceError/Code/closed` after `close()`.
    var sealer: ValueSealer {
        get throws {
            guard let sealer = openSealer.withLock({ $0 }) else {
                throw PersistenceError(.closed, "the database was closed")
            }
            return sealer
        }
    }

    /// The current size of the memory map in bytes (it grows as needed).
    public var mapSize: Int { (try? environment.mapSize) ?? 0 }

    @discardableResult
    public func read<R>(_ body: (LMDBContext) throws -> R) throws -> R {
        let environment = try environment
        return try driver.run(writable: false, in: { try environment.read($0) }, context: makeContext, body)
    }

    @discardableResult
    public func write<R>(_ body: (LMDBContext) throws -> R) throws -> R {
        try write(options: [], body)
    }

    @discardableResult
    public func write<R>(options: WriteOptions, _ body: (LMDBContext) throws -> R) throws -> R {
        let environment = try environment
        return try environment.writer.withLock {
            try driver.run(
                writable: true, options: options, in: { try environment.write(instrumentation: instrumentation, $0) },
                context: makeContext, body)
        }
    }

    /// The context of a transaction, after checking that no other process migrated the store under this database.
    private func makeContext(_ transaction: Transaction, _ recorder: ChangeRecorder?) throws -> LMDBContext {
        try stamp.check(metaDBI, transaction)
        let storage = LMDBStorage(
            transaction: transaction, stores: stores, sealer: try sealer, metaDBI: metaDBI, aliasDBI: aliasDBI,
            instrumentation: instrumentation)
        return LMDBContext(storage: storage, graph: stores.graph, recorder: recorder, instrumentation: instrumentation)
    }

    @discardableResult
    public func read<R: Sendable>(_ body: @escaping @Sendable (LMDBContext) throws -> R) async throws -> R {
        try await runner.read { try self.read(body) }
    }

    @discardableResult
    public func write<R: Sendable>(_ body: @escaping @Sendable (LMDBContext) throws -> R) async throws -> R {
        try await runner.write { try self.write(body) }
    }

    @discardableResult
    public func write<R: Sendable>(
        options: WriteOptions, _ body: @escaping @Sendable (LMDBContext) throws -> R
    ) async throws -> R {
        try await runner.write { try self.write(options: options, body) }
    }
}
