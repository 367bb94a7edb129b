internal import CLMDB
public import CoreMetrics
public import Foundation
public import Logging
// Apps import one module: the backend brings the core's protocols and types with it.
@_exported public import PersistenceCore
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
public import Tracing

/// Builds an ``LMDBDatabase``: validates the configuration, then opens or creates the store and checks the
/// passphrase before any record is read or written (a refused passphrase leaves the file unchanged).
///
/// ```swift
/// let db = try LMDBBuilder(databaseName: "App", passphrase: secret, model: AppModel.current).create()
/// ```
///
/// The store is one file, `<directory>/<databaseName>.lmdb`, with `<databaseName>.lmdb-lock` beside it.
///
/// **What encryption protects.** With a passphrase, every record is sealed with AES-256-GCM (XChaCha20-Poly1305 on a
/// CPU without AES instructions; the store records which) under the store's random data key, stored only wrapped
/// under a key derived from the passphrase (Argon2id, ``KeyDerivation/rfc9106`` by default, with a random salt; see
/// ``LMDBDatabase/changePassphrase(from:to:keyDerivation:)-3vte``); the authenticated data binds the entity and the
/// record's key, so a value altered or moved to another key fails with `authenticationFailed` instead of reading as
/// other data. Indexed values are stored only as keyed BLAKE2b digests (HMAC-SHA256 in stores made before format 3).
/// The keys live in libsodium's guarded memory, wiped when the database closes. **Not protected**: primary keys
/// (they are LMDB keys, in plaintext), entity and attribute names (the schema), how many records there are and their
/// sizes, and which records are read or written when. Passphrases are compared after Unicode NFC normalization, so
/// composed and decomposed forms are the same passphrase.
///
/// **Platforms.** The backend links the system's `liblmdb` and `libsodium`, found through pkg-config. It is built
/// and tested on Linux, and should build on macOS where pkg-config finds Homebrew's `lmdb` and `libsodium`; it can't
/// be built for iOS, tvOS, watchOS or visionOS yet, whose SDKs have neither library.
public struct LMDBBuilder: FileBackedDatabaseBuilder {
    /// The database name: the file-name stem. Not empty, no path separators, no `..`.
    public var databaseName: String
    /// The passphrase values are sealed with; `nil` only for a store made with
    /// ``unencrypted(databaseName:model:schemaVersion:)``.
    public var passphrase: String?
    /// The entity types and model version; ``Model/version`` is the store's schema version.
    public var model: Model
    /// The store's schema version: **the same number as** `model.version`, under the name Realm users know.
    ///
    /// A store has one schema version, stored with its schema. Reading or setting this property reads or sets
    /// `model.version`, so the two can never disagree. A store written with a higher version is refused; a store
    /// written with a lower one whose schema is unchanged opens and is brought up to this version.
    public var schemaVersion: Int {
        get { model.version }
        set { model.version = newValue }
    }
    /// Where the store's files go; `nil` for the same per-user default as the SQLite backend. A given directory
    /// must exist and be writable.
    public var directory: URL?
    /// The size of the memory map LMDB opens the file with: the most the store can hold before the map grows.
    ///
    /// The map is address space, not disk or memory: the file only grows as data is written, and pages are read in
    /// as they are touched. So the default is large — ``defaultMapSize``, 1 TiB on 64-bit macOS and Linux — and a
    /// store practically never fills it. The map also grows ahead of need, before a write begins, whenever less
    /// than half of it is free. A write block is never run twice: one that fills the map anyway is rolled back whole
    /// and throws `storageFull` (the map is then larger, so it can be run again). When the system refuses a map this
    /// large (`ENOMEM`, a limited address space), the store opens with the largest half-size that it accepts.
    public var initialMapSize = LMDBBuilder.defaultMapSize
    /// The default ``initialMapSize``: 1 TiB on 64-bit macOS and Linux; 4 GiB on iOS, tvOS, watchOS and visionOS,
    /// whose apps get less address space; 1 GiB on 32-bit systems.
    public static let defaultMapSize: Int = {
        guard MemoryLayout<Int>.size == 8 else { return 1 << 30 }
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            return 4 << 30
        #else
            return 1 << 40
        #endif
    }()
    /// The ``initialMapSize`` for an app extension on Apple platforms: 32 MiB.
    ///
    /// An extension (a widget, a share or notification extension) runs with a few tens of MB of memory and a small
    /// address space, where a map of ``defaultMapSize`` may be refused or count against the extension. The map only
    /// bounds what the store can hold before it grows, and it grows ahead of need, so a small one costs nothing but
    /// earlier growth; a store file already larger than the map opens with a map of its size. Set it in the
    /// extension's builder: `builder.initialMapSize = LMDBBuilder.appExtensionMapSize`.
    public static let appExtensionMapSize = 32 << 20
    /// How many read transactions may be open at once across the processes using the store. Each process also keeps
    /// the reader slots of up to `maximumReaders / 32` (at most 4) finished reads, to begin later reads on without
    /// locking the reader table; they hold no snapshot.
    public var maximumReaders = 126
    /// The app group whose identifier starts the names of LMDB's semaphores; `nil` (the default) for LMDB's own
    /// names.
    ///
    /// Apple's platforms build LMDB with POSIX semaphores, named after the store (`/MDBr…`, `/MDBw…`), and an app's
    /// sandbox lets it open only semaphores whose names start with one of its app groups: an app on iOS, or a
    /// sandboxed macOS app, that shares a store with its extensions sets this to the app group of the container the
    /// store is in (`group.com.example.notes`). LMDB then names them `<prefix>/MDBr<hash>` (`/<prefix>.MDBr<hash>`
    /// on Linux, where a name holds no other `/`), which must fit Apple's limit of 31 bytes: the prefix may have at
    /// most 20 UTF-8 bytes, leaving 5 characters or more of the store's hash. Every process that opens the store
    /// should set the same prefix; the process that opens it first names the semaphores for all of them.
    ///
    /// Only the vendored LMDB has this option: Apple's platforms always build it, and Linux with the
    /// `VendoredLibraries` trait. With the system's liblmdb (Linux by default), which locks with mutexes in the lock
    /// file and names no semaphore, ``create()`` refuses a prefix.
    public var semaphorePrefix: String?
    /// Whether every write's commit is followed by `fcntl(F_FULLFSYNC)`, which asks the drive to write its cache to
    /// the medium; `false` by default.
    ///
    /// LMDB flushes the data pages at each commit (on Apple with `F_FULLFSYNC` too, in the 0.9.36 these platforms
    /// build), but writes the meta page that makes the commit durable through a descriptor opened with `O_DSYNC`,
    /// which on Apple leaves it in the drive's cache: after a power loss the store is consistent, but may have lost
    /// its last commits. With this option a write returns only once the drive has the commit, at the cost of one
    /// more flush per write (tens of milliseconds on some drives), like SQLite's `PRAGMA fullfsync`.
    ///
    /// On Linux this does nothing: `F_FULLFSYNC` doesn't exist there, and `fsync`/`fdatasync`, which LMDB already
    /// calls at commit, flush the drive's cache themselves.
    public var fullFsync = false
    /// The key derivation for a new encrypted store, Argon2id at RFC 9106's t = 3, 64 MiB by default (an existing
    /// store keeps the one it was created with, until
    /// ``LMDBDatabase/changePassphrase(from:to:keyDerivation:)-3vte`` is given others).
    public var keyDerivation = KeyDerivation.rfc9106
    /// Brings a store written with an older ``schemaVersion`` up to the model, at ``create()``: called once with the
    /// store's version, before the store opens (see ``Migration``). Without a block, what the
    /// schema difference can do alone is done, by the rules of an inferred SQL migration step (added and removed
    /// entities and attributes, declared defaults, renames declared with ``Entity/previousAttributeNames`` and
    /// ``Entity/previousName``, widening, indexes); a change that needs code is `migrationRequired`, naming it, with
    /// the store unchanged. With a block, the same declarative changes are made around it.
    public var migrationBlock: MigrationBlock?
    /// The model versions the app shipped and the mapping models between them: a store of an older version is
    /// brought up to ``model`` step by step at ``create()``, exactly as on SQLite and PostgreSQL (see
    /// `MigrationPlan`), in LMDB's bounded memory — every step writes into databases of the migration's own, and the
    /// store switches to them at once at the end. Give a plan or a ``migrationBlock``, not both.
    public var migrationPlan: MigrationPlan?
    /// Called on the opening thread as a migration goes through each entity's records (see ``MigrationProgress``).
    public var migrationProgress: MigrationProgressHandler?

    /// Where the database logs, through swift-log; `nil` (the default) logs nothing. Operations and transactions
    /// are logged at `.trace`, migrations and map growth at `.info`; no stored value, key or passphrase is ever logged.
    public var logger: Logger?
    /// Where the database records metrics, through swift-metrics — pass `MetricsSystem.factory` for the
    /// bootstrapped backend; `nil` (the default) records none. Transaction counts and durations, map growth and
    /// size, migrations, and authentication failures (a wrong passphrase, a tampered value), each with the
    /// dimensions `backend` and `store`.
    public var metricsFactory: (any MetricsFactory)?
    /// Where the database's spans go, through swift-distributed-tracing — pass `InstrumentationSystem.tracer` for the
    /// bootstrapped tracer; `nil` (the default) makes none. A span per transaction (`persistence.read`,
    /// `persistence.write`) and one for opening the store (`persistence.open`, with a migration's versions when one
    /// ran), each a child of the caller's span; no stored value or key is ever in one.
    public var tracer: (any Tracer)?
    /// Creates a new encrypted store in format 1 (keys derived straight from the passphrase), as Persistence did
    /// before format 2: only for tests of reading and upgrading such stores.
    var createsDerivedKeyFormat = false
    /// The cipher of a new encrypted store; `nil` (the default) picks AES-256-GCM where the CPU has AES instructions
    /// and XChaCha20-Poly1305 elsewhere. Set by tests to force the fallback.
    var valueCipher: ValueCipher?
    /// Seals and opens AES-256-GCM values with swift-crypto's portable code even where libsodium has hardware AES, as
    /// on a CPU without AES instructions: for tests of that path.
    var usesPortableAES = false

    /// Creates a builder for an encrypted store.
    /// - Parameters:
    ///   - databaseName: The file-name stem.
    ///   - passphrase: Any non-empty Unicode text.
    ///   - model: The entity types and model version.
    ///   - schemaVersion: The schema version, when given: it replaces `model.version` (see ``schemaVersion``).
    public init(databaseName: String, passphrase: String, model: Model, schemaVersion: Int? = nil) {
        self.databaseName = databaseName
        self.passphrase = passphrase
        self.model = model
        if let schemaVersion { self.schemaVersion = schemaVersion }
    }

    /// Creates a builder for an encrypted store of a model made of these entity types, at `schemaVersion` (1 when
    /// not given).
    public init(databaseName: String, passphrase: String, entities: [any Entity.Type], schemaVersion: Int? = nil) {
        self.init(
            databaseName: databaseName, passphrase: passphrase, model: Model(version: 1, entities: entities),
            schemaVersion: schemaVersion)
    }

    /// A builder for a store whose values are **not** encrypted: anyone who can read the file can read the data.
    public static func unencrypted(databaseName: String, model: Model, schemaVersion: Int? = nil) -> LMDBBuilder {
        var builder = LMDBBuilder(
            databaseName: databaseName, passphrase: "", model: model, schemaVersion: schemaVersion)
        builder.passphrase = nil
        return builder
    }

    /// A builder for an unencrypted store of version 1 of a model made of these entity types: anyone who can read
    /// the file can read the data.
    public static func unencrypted(
        databaseName: String, entities: [any Entity.Type], schemaVersion: Int? = nil
    ) -> LMDBBuilder {
        unencrypted(
            databaseName: databaseName, model: Model(version: 1, entities: entities), schemaVersion: schemaVersion)
    }

    /// The logger, metrics and tracer of the database this builder makes.
    var instrumentation: Instrumentation {
        Instrumentation(
            logger: logger, metricsFactory: metricsFactory, tracer: tracer, backend: "lmdb",
            system: .init(name: "lmdb", isServer: false), store: databaseName)
    }

    /// Validates the configuration, then opens (creating when needed) the database.
    ///
    /// A store written with an older ``schemaVersion`` is migrated before this returns (``migrationBlock``); one
    /// written with a newer version is refused, untouched.
    ///
    /// - Throws: `PersistenceError` — `invalidName`, `invalidConfiguration` (an empty passphrase, options out of
    ///   range, a store of a newer schema version), `directoryNotFound`, `permissionDenied`, `invalidSchema`,
    ///   `wrongPassphrase` (checked before any record is read or written), `migrationRequired` (the schema changed
    ///   without a version bump), `migrationFailed` (the migration block threw — the cause is the error's
    ///   `underlyingError` — or the migrated records don't fit the model; the store is unchanged),
    ///   `unsupportedFormatVersion`, `corrupt`, `storageFull`, `busy` (another process is migrating the store).
    public func create() throws -> LMDBDatabase {
        let (layouts, file) = try validated()
        return try instrumentation.opening {
            // Held from before the file is touched, so the store can't be deleted while it opens.
            let registration = StoreFiles.register(file)
            let (environment, shared) = try openEnvironment(layouts, file)
            let database: LMDBDatabase
            do {
                database = try StoreOpening(
                    builder: self, environment: environment, layouts: layouts, isShared: shared,
                    registration: registration
                ).open(file: file)
            } catch {
                try? EnvironmentRegistry.release(environment, closing: false)
                throw error
            }
            // Outside the opening's lock and transaction: the build writes in transactions of its own. A failed
            // build closes the database (which releases the environment).
            return try database.buildingFullTextIndexes(schemaVersion: schemaVersion, model: model)
        }
    }

    /// The model's layouts and the store's file, once every option is checked (before anything touches disk).
    func validated() throws -> (layouts: [RecordLayout], file: URL) {
        if let passphrase, passphrase.isEmpty {
            throw PersistenceError(.invalidConfiguration, "the passphrase is empty")
        }
        guard schemaVersion >= 0 else {
            throw PersistenceError(.invalidConfiguration, "the schema version (model.version) can't be negative")
        }
        guard initialMapSize >= 1 << 20 else {
            throw PersistenceError(.invalidConfiguration, "initialMapSize must be at least 1 MiB")
        }
        guard (1...4096).contains(maximumReaders) else {
            throw PersistenceError(.invalidConfiguration, "maximumReaders must be between 1 and 4096")
        }
        try validateSemaphorePrefix()
        guard migrationPlan == nil || migrationBlock == nil else {
            throw PersistenceError(
                .invalidConfiguration,
                "the builder has both a migrationPlan and a migrationBlock; a store's history is described one way: "
                    + "give the plan's steps mapping models, or the block every version's code")
        }
        // A plan's mistakes are refused before any file is made.
        if let migrationPlan { _ = try migrationPlan.validated(current: model) }
        guard !model.entities.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the model has no entities")
        }
        guard model.version >= 0 else {
            throw PersistenceError(.invalidConfiguration, "the schema version (model.version) is negative")
        }
        try keyDerivation.validate()
        let layouts = try model.layouts()
        let location = try StoreLocation(name: databaseName, directory: directory)
        return (layouts, location.file(extension: "lmdb").resolvingSymlinksInPath())
    }

    /// The process's environment of `file`, and whether another database of the process holds it.
    func openEnvironment(_ layouts: [RecordLayout], _ file: URL) throws -> (Environment, shared: Bool) {
        let indexCount = layouts.reduce(0) { $0 + $1.entity.indexes.count + 3 * $1.entity.fullTextIndexes.count }
        return try EnvironmentRegistry.environment(path: file.path) {
            try Environment(
                path: file.path, mapSize: initialMapSize, maximumReaders: maximumReaders,
                maximumDatabases: max(128, 2 * (1 + layouts.count + indexCount)), semaphorePrefix: semaphorePrefix,
                fullFsync: fullFsync)
        }
    }

    /// Deletes this builder's store — `<directory>/<databaseName>.lmdb` and its `-lock` file — as
    /// ``LMDBDatabase/deleteStore(named:in:)`` does: refused with `storeInUse` while a database of this process has it
    /// open.
    /// - Returns: Whether there was anything to delete.
    @discardableResult
    public func deleteStore() throws -> Bool {
        try LMDBDatabase.deleteStore(named: databaseName, in: directory)
    }

    /// Runs the migration ``create()`` would run on the store — the ``migrationBlock`` included, with its side
    /// effects — and rolls it back: the store is left as it was. Use it before shipping a new schema version, on a
    /// copy of real data, to learn whether the migration succeeds, what it changes and how long it takes.
    ///
    /// - Returns: What the migration would do; `nil` when there is no store, or it is at this schema version with
    ///   this schema.
    /// - Throws: What ``create()`` would throw, except that nothing is created or changed.
    public func dryRunMigration() throws -> MigrationReport? {
        let (layouts, file) = try validated()
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let registration = StoreFiles.register(file)
        let (environment, shared) = try openEnvironment(layouts, file)
        defer { try? EnvironmentRegistry.release(environment, closing: false) }
        return try StoreOpening(
            builder: self, environment: environment, layouts: layouts, isShared: shared, registration: registration
        ).dryRun()
    }
}
