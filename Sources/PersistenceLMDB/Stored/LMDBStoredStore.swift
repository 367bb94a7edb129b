internal import CLMDB
package import Foundation
@_spi(PersistenceBackend) package import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// An LMDB store opened read-only through the schema it holds (see ``StoredStore``): one read transaction from open
/// to close, so every entity is read from one snapshot.
///
/// **Nothing of the store is written.** The environment is opened with `MDB_RDONLY`, so the data file is opened
/// read-only by the system. When the store's lock file (`<name>.lmdb-lock`) exists, this store registers its reader
/// there, as any LMDB reader does, so that another process writing meanwhile keeps the pages of this snapshot; when
/// there is none — a file someone sent — or it can't be opened for writing, the store opens with `MDB_NOLOCK` and
/// creates nothing: then a process that writes the store while it is open here could reuse pages this snapshot
/// reads (the caller answers for that, as for a file being copied).
///
/// Records are read in LMDB's key order, which is primary-key order: keys are encoded so that their byte order is the
/// order of ``Value/compare(_:_:)`` (``KeyCodec``: integers big-endian with the sign bit flipped, text after a
/// prefix byte as its UTF-8 bytes, UUIDs as their bytes), and LMDB compares keys as `memcmp`, the shorter first.
///
/// An entity of the stored schema whose records database is missing (only damage makes one: opening a store creates
/// every database) reads as empty, as an app's opening would see it; ``verify()`` reports it, as it does a missing
/// index database.
package final class LMDBStoredStore: StoredStore {
    package let backend = "lmdb"
    package let schemaVersion: Int
    package let layouts: [RecordLayout]
    /// Whether the store's values are sealed (it has a key record).
    package let isEncrypted: Bool
    /// The store's file.
    package let file: URL
    private let environment: Environment
    /// The store file's registration as open in this process (so it isn't deleted while read), ended at close.
    private let registration: StoreFiles.StoreRegistration
    /// The read transaction of the whole session; `nil` once closed.
    private var transaction: Transaction?
    private let opened: Opened
    /// The records, read through the storage an app's context uses, in the session's transaction: the entities whose
    /// records database the file has.
    private let storage: LMDBStorage
    /// Each layout's entity's position in ``storage``; `nil` for one whose records database is missing.
    private let storagePositions: [Int?]

    /// What opening read: the metadata, the keys and each entity's databases.
    private struct Opened {
        var format: UInt64
        var keyFormat: UInt64
        var keyRecord: StoreKeyRecord?
        var sealer: ValueSealer
        var metaDBI: MDB_dbi
        /// The aliases' database, when the file has one.
        var aliasDBI: MDB_dbi?
        var schemaVersion: Int
        /// The stored schema's layouts, sorted by entity name: the ones records and entity stores share.
        var layouts: [RecordLayout]
        /// Each entity's databases by entity name; entities whose records database is missing have none.
        var stores: [String: EntityStore]
        /// The databases the stored schema names that the file doesn't have, with the entity they belong to.
        var missing: [(entity: String, database: String)]
        var usesLockFile: Bool
    }

    /// Opens the store at `file` read-only, unlocking it with `passphrase` when it is encrypted.
    /// - Throws: ``PersistenceError`` — `notFound` for no file; `corrupt` for a file that isn't an LMDB store or
    ///   whose metadata is damaged; `invalidSchema` for an LMDB file Persistence didn't create;
    ///   `unsupportedFormatVersion` for a newer format; `invalidConfiguration` for a passphrase given for an
    ///   unencrypted store, or a semaphore prefix LMDB can't use; `wrongPassphrase` for a missing or wrong passphrase
    ///   of an encrypted one; `storeInUse` while a database of this process has the store open.
    /// - Parameter semaphorePrefix: The app group an app that shares the store opens it with
    ///   (``LMDBBuilder/semaphorePrefix``): when this process is the first to open the store, LMDB names its
    ///   semaphores after it, so that the app, opening meanwhile in its sandbox, can use them.
    package init(file: URL, passphrase: String?, semaphorePrefix: String? = nil) throws {
        try LMDBBuilder.validateSemaphorePrefix(semaphorePrefix)
        guard FileManager.default.fileExists(atPath: file.path) else {
            throw PersistenceError(.notFound, "no LMDB store at \(file.path)")
        }
        // LMDB allows one environment per file per process: closing a second one would drop the first one's locks.
        // (A database opened in this process while this store is open is the caller's to avoid.)
        guard !StoreFiles.isOpen(file) else {
            throw PersistenceError(.storeInUse, "\(file.path) is open in this process: close its database first")
        }
        let registration = StoreFiles.register(file)
        var usesLockFile = FileManager.default.fileExists(atPath: file.path + "-lock")
        let environment: Environment
        do {
            environment = try Environment(
                readOnlyPath: file.path, lockFile: usesLockFile, maximumDatabases: Self.maximumDatabases,
                semaphorePrefix: semaphorePrefix)
        } catch let error as PersistenceError where usesLockFile && error.code == .permissionDenied {
            // A lock file this process can't write (another user's store, a read-only volume): read without it.
            usesLockFile = false
            environment = try Environment(
                readOnlyPath: file.path, lockFile: false, maximumDatabases: Self.maximumDatabases)
        }
        let transaction = try Self.beginRead(environment)
        let opened: Opened
        do {
            opened = try Self.read(file, passphrase, transaction, usesLockFile: usesLockFile)
        } catch {
            // Before the environment closes (lmdb.h: a transaction must end before its environment is closed).
            transaction.abort()
            throw error
        }
        self.file = file
        self.registration = registration
        self.environment = environment
        self.transaction = transaction
        self.opened = opened
        isEncrypted = opened.keyRecord != nil
        layouts = opened.layouts
        schemaVersion = opened.schemaVersion
        let present = opened.layouts.compactMap { opened.stores[$0.entity.name] }
        var next = 0
        storagePositions = opened.layouts.map { layout in
            guard opened.stores[layout.entity.name] != nil else { return nil }
            defer { next += 1 }
            return next
        }
        storage = LMDBStorage(
            transaction: transaction, stores: EntityLookup(unrelated: present.map(\.layout), storage: present),
            sealer: opened.sealer, metaDBI: opened.metaDBI, aliasDBI: opened.aliasDBI, instrumentation: .off,
            namesKeysInErrors: true)
    }

    deinit {
        // The transaction ends before the environment's handle closes (its deinit runs after this).
        transaction?.abort()
    }

    /// The store's databases at most: every entity and index of any schema this tool opens, with room besides.
    private static let maximumDatabases = 4_096

    /// Begins the session's read transaction, adopting a map another process grew meanwhile.
    private static func beginRead(_ environment: Environment) throws -> Transaction {
        var attempts = 0
        while true {
            do {
                return try Transaction(environment: environment, readOnly: true)
            } catch is LMDBError.MapResized where attempts < 3 {
                attempts += 1
                try LMDBError.check(mdb_env_set_mapsize(environment.handle, 0), "could not adopt the grown map")
            } catch is LMDBError.MapResized {
                throw PersistenceError(.busy, "another process kept growing the store's map while it opened")
            }
        }
    }

    /// Reads the metadata, checks the passphrase, then opens each entity's databases without creating them.
    private static func read(_ file: URL, _ passphrase: String?, _ transaction: Transaction, usesLockFile: Bool)
        throws -> Opened
    {
        var metaDBI = MDB_dbi()
        let code = mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &metaDBI)
        if code == MDB_NOTFOUND || code == MDB_INCOMPATIBLE {
            throw PersistenceError(.invalidSchema, "\(file.path) is an LMDB file Persistence did not create")
        }
        try LMDBError.check(code, "could not open the store's metadata")
        guard let format = try StoreMetadata.readNumber(.format, metaDBI, transaction) else {
            throw PersistenceError(.corrupt, "\(file.path) has no format version: the store is damaged or unfinished")
        }
        try StoreGate.check(format: Int64(clamping: format), formats: StoreMetadata.formats)
        let keyFormat = try StoreMetadata.keyFormat(of: format, metaDBI, transaction)
        let keyRecord = try StoreKeyRecord.read(format: keyFormat, metaDBI, transaction)
        guard let json = try StoreMetadata.read(.schema, metaDBI, transaction) else {
            throw PersistenceError(.corrupt, "\(file.path) has no stored schema: the store is damaged")
        }
        let layouts = try StoreGate.storedLayouts(json)
        let version = try StoreOpening.version(StoreMetadata.requiredNumber(.schemaVersion, metaDBI, transaction))
        // Before any record is read: a refused passphrase reads nothing.
        let sealer = ValueSealer(keys: try unlock(keyRecord, passphrase))
        let names = try DatabaseNames.read(metaDBI, transaction)
        var stores: [String: EntityStore] = [:]
        var missing: [(entity: String, database: String)] = []
        for layout in layouts {
            let entity = layout.entity.name
            let name = names.physical(DatabaseNames.entity(entity))
            guard let dbi = try existingDatabase(name, flags: 0, transaction) else {
                missing.append((entity, name))
                continue
            }
            var indexes: [EntityStore.IndexStore] = []
            for index in layout.entity.indexes {
                let indexName = names.physical(DatabaseNames.index(index, of: entity))
                let flags = index.isUnique ? 0 : UInt32(MDB_DUPSORT)
                guard let indexDBI = try existingDatabase(indexName, flags: flags, transaction) else {
                    missing.append((entity, indexName))
                    continue
                }
                let positions = try index.attributes.map { try layout.requirePosition(of: $0) }
                indexes.append(.init(index: index, positions: positions, dbi: indexDBI, databaseName: indexName))
            }
            stores[entity] = EntityStore(layout: layout, dbi: dbi, databaseName: name, indexes: indexes)
        }
        return Opened(
            format: format, keyFormat: keyFormat, keyRecord: keyRecord, sealer: sealer, metaDBI: metaDBI,
            aliasDBI: try existingDatabase(LMDBStorage.aliasDatabaseName, flags: 0, transaction),
            schemaVersion: version, layouts: layouts, stores: stores, missing: missing, usesLockFile: usesLockFile)
    }

    /// The handle of a named database that exists, or `nil`; never creates one.
    /// - Throws: `corrupt` when the database exists with other flags than the schema gives it.
    private static func existingDatabase(_ name: String, flags: UInt32, _ transaction: Transaction) throws -> MDB_dbi? {
        var dbi = MDB_dbi()
        let code = mdb_dbi_open(transaction.handle, name, flags, &dbi)
        if code == MDB_NOTFOUND { return nil }
        if code == MDB_INCOMPATIBLE {
            throw PersistenceError(
                .corrupt, "the database '\(name)' is not of the kind the stored schema gives it: the store is damaged",
                nativeCode: code, nativeMessage: "MDB_INCOMPATIBLE")
        }
        try LMDBError.check(code, "could not open '\(name)'")
        return dbi
    }

    /// The store's keys from `passphrase`, as an app's opening unlocks them (`StoreOpening.existingKeys`).
    private static func unlock(_ record: StoreKeyRecord?, _ passphrase: String?) throws -> StoreKeys? {
        switch (record, passphrase) {
        case (nil, nil):
            return nil
        case (nil, _?):
            throw PersistenceError(.invalidConfiguration, "the store is not encrypted; open it without a passphrase")
        case (_?, nil):
            throw PersistenceError(.wrongPassphrase, "the store is encrypted and no passphrase was given")
        case (let record?, let passphrase?):
            return try record.unlock(passphrase: passphrase)
        }
    }

    // MARK: - Reading

    package var details: [(label: String, value: String)] {
        get throws {
            let transaction = try openTransaction()
            var info = MDB_envinfo()
            var stat = MDB_stat()
            try LMDBError.check(mdb_env_info(environment.handle, &info), "could not read the environment's state")
            try LMDBError.check(mdb_env_stat(environment.handle, &stat), "could not read the page size")
            let format =
                opened.format == StoreMetadata.mappedFormat
                ? "Persistence LMDB format \(opened.format) (key record of format \(opened.keyFormat))"
                : "Persistence LMDB format \(opened.format)"
            var details: [(label: String, value: String)] = [
                ("file", file.path),
                ("format", format),
                ("file size", StoredStoreSize.bytes(StoredStoreSize.fileSize(file))),
                ("map size", StoredStoreSize.bytes(Int64(clamping: info.me_mapsize))),
                ("pages", "\(info.me_last_pgno + 1) of \(stat.ms_psize) bytes"),
            ]
            if let free = try? freePages(transaction) { details.append(("free pages", "\(free)")) }
            details.append(("snapshot", "transaction \(transaction.id)"))
            details.append(
                (
                    "readers",
                    opened.usesLockFile
                        ? "\(info.me_numreaders) of \(info.me_maxreaders) reader slots used"
                        : "not tracked (opened without the lock file)"
                ))
            details.append(("encryption", encryption))
            return details
        }
    }

    /// The cipher, index hash and key derivation of an encrypted store, or `none`; never a key.
    private var encryption: String {
        guard let record = opened.keyRecord, let keys = opened.sealer.keys else {
            return "none (values are stored in the clear)"
        }
        let suite = "\(keys.cipher.rawValue) values, \(keys.indexHashing.rawValue) index keys"
        switch record {
        case .derived(let derived):
            return suite + "; keys derived from the passphrase with \(derived.parameters)"
        case .wrapped(let wrapped):
            return suite + "; random data keys wrapped under a key derived with \(wrapped.parameters)"
        }
    }

    /// The pages on LMDB's free list in this snapshot (as `mdb_stat -f` counts them): each record of the free
    /// database is a page list whose first word is its length.
    private func freePages(_ transaction: Transaction) throws -> Int {
        var pages = 0
        // The free database is always database 0; a read transaction may walk it.
        try transaction.forEach(MDB_dbi(0)) { _, list in
            guard list.count >= MemoryLayout<Int>.size else { return true }
            pages += Int(list.loadUnaligned(as: UInt.self))
            return true
        }
        return pages
    }

    package func storage(for position: Int) throws -> (storage: any RecordStorage, entity: Int)? {
        _ = try openTransaction()
        return storagePositions[position].map { (storage, $0) }
    }

    package func verify() throws -> VerificationReport {
        let transaction = try openTransaction()
        var verifier = LMDBVerifier(
            transaction: transaction, stores: layouts.compactMap { opened.stores[$0.entity.name] },
            sealer: opened.sealer, metaDBI: opened.metaDBI, schema: layouts.map(\.entity))
        var report = try verifier.run()
        for (entity, database) in opened.missing {
            report.append(
                VerificationProblem(
                    .schemaMismatch, entity: entity,
                    message: "the store has no database '\(database)' that its schema declares"))
        }
        try verifyReferencesAndFullTextIndexes(into: &report)
        return report
    }

    package func close() throws {
        guard let transaction else { return }
        self.transaction = nil
        transaction.abort()
        defer { registration.end() }
        try environment.close()
    }

    /// The session's read transaction.
    /// - Throws: `closed` after ``close()``.
    private func openTransaction() throws -> Transaction {
        guard let transaction else { throw PersistenceError(.closed, "the store \(file.path) is closed") }
        return transaction
    }
}

@available(*, unavailable, message: "one read transaction, used from one thread at a time")
extension LMDBStoredStore: Sendable {}
