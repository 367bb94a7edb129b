internal import CLMDB
package import Foundation
@_spi(PersistenceBackend) package import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// A new LMDB store filled with records (see ``StoredStoreWriter``): written to a temporary file beside its place, in
/// one write transaction, and moved into place only at ``commit()`` — by a hard link, so it never replaces a file
/// that appeared at the place meanwhile.
///
/// The store is what ``LMDBBuilder`` would have made for the same schema, version and passphrase: the same metadata
/// (`StoreOpening.initialize`), a format-3 key record with new random keys wrapped under the passphrase, every
/// entity's and index's database, the records sealed and indexed by the storage's own insert
/// (`LMDBStorage.insert(_:into:)`, the nonce counter persisted with them). So an app's builder with a matching model
/// and the same passphrase opens it as its own.
///
/// The temporary file is `.<name>.<UUID>.lmdb-partial`, with LMDB's `-lock` file beside it; both go at
/// ``commit()``, ``discard()``, deinit, or an error that leaves the write unusable (a full map). The lock file of the
/// store at its place is made by the first opening, as for any store.
package final class LMDBStoredStoreWriter: StoredStoreWriter {
    private let file: URL
    private let temporary: URL
    private let environment: Environment
    private let transaction: Transaction
    private let storage: LMDBStorage
    /// Each entity's databases by entity name.
    private let stores: [String: EntityStore]
    private var finished = false

    /// Starts a store at `file` holding `layouts`' entities at `schemaVersion`, encrypted when `passphrase` is given.
    ///
    /// - Parameters:
    ///   - keyDerivation: How the key that wraps the store's keys is derived from `passphrase`.
    ///   - initialMapSize: The map the whole write must fit in (it can't grow while the one transaction is open): by
    ///     default the builder's default, address space rather than disk.
    /// - Throws: ``PersistenceError`` — `invalidName` for a file not ending in `.lmdb` or an invalid store name,
    ///   `invalidArgument` when something exists at `file`, `permissionDenied` for a directory that can't be written,
    ///   `directoryNotFound`, `invalidConfiguration` for an empty passphrase, a negative version or key-derivation
    ///   parameters out of range.
    package init(
        file: URL, layouts: [RecordLayout], schemaVersion: Int, passphrase: String?, keyDerivation: KeyDerivation,
        initialMapSize: Int = LMDBBuilder.defaultMapSize
    ) throws {
        try NewStoreFile.checkPlace(file, fileExtension: "lmdb", backend: "an LMDB")
        if let passphrase, passphrase.isEmpty {
            throw PersistenceError(.invalidConfiguration, "the passphrase is empty")
        }
        guard schemaVersion >= 0 else {
            throw PersistenceError(.invalidConfiguration, "the schema version can't be negative")
        }
        guard initialMapSize >= 1 << 20 else {
            throw PersistenceError(.invalidConfiguration, "initialMapSize must be at least 1 MiB")
        }
        try keyDerivation.validate()
        // Derived before any file exists: slow by design, and a failure leaves nothing.
        let keys = try passphrase.map { try StoreKeyRecord.new(passphrase: $0, parameters: keyDerivation) }
        self.file = file
        temporary = NewStoreFile.temporary(for: file)
        let indexCount = layouts.reduce(0) { $0 + $1.entity.indexes.count + 3 * $1.entity.fullTextIndexes.count }
        let environment: Environment
        do {
            // The builder's environment settings (``LMDBBuilder/maximumReaders`` at its default).
            environment = try Environment(
                path: temporary.path, mapSize: initialMapSize, maximumReaders: 126,
                maximumDatabases: max(128, 2 * (1 + layouts.count + indexCount)))
        } catch {
            Self.remove(temporary)
            throw error
        }
        var begun: Transaction?
        do {
            // The writer's own file: no other transaction of any process uses it, so none of the environment's locks
            // is needed, and nobody grows the map meanwhile.
            let transaction = try Transaction(environment: environment, readOnly: false)
            begun = transaction
            let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
            try StoreOpening.initialize(
                meta, transaction, schema: StoreGate.schemaJSON(layouts.map(\.entity)), schemaVersion: schemaVersion,
                keyRecord: keys?.1)
            let aliases = try environment.database(named: LMDBStorage.aliasDatabaseName, flags: 0, in: transaction)
            var stores: [String: EntityStore] = [:]
            for layout in layouts {
                guard stores[layout.entity.name] == nil else {
                    throw PersistenceError(.invalidSchema, "the schema has two entities named '\(layout.entity.name)'")
                }
                stores[layout.entity.name] = try EntityStore(
                    layout: layout, environment: environment, transaction: transaction)
            }
            if transaction.sawMapFull { throw Self.mapFull(file) }
            // The storage's insert, with no model of types behind it: it uses only the entity stores it is handed.
            storage = LMDBStorage(
                transaction: transaction,
                stores: try EntityLookup(model: Model(version: schemaVersion, entities: []), storage: []),
                sealer: ValueSealer(keys: keys?.0), metaDBI: meta, aliasDBI: aliases, instrumentation: .off)
            self.stores = stores
            self.transaction = transaction
            self.environment = environment
        } catch {
            // The transaction ends before the environment closes.
            begun?.abort()
            try? environment.close()
            Self.remove(temporary)
            throw error
        }
    }

    deinit { discard() }

    package func insert(_ record: Record) throws {
        guard !finished else { throw PersistenceError(.closed, "the new store \(file.path) is already finished") }
        let entity = record.layout.entity.name
        guard let store = stores[entity] else {
            throw PersistenceError(.unknownEntity, "the new store has no entity '\(entity)'")
        }
        let values = try store.layout.storedValues(of: record)
        do {
            // Checks unique indexes, then the primary key, before writing: a refused record leaves nothing, and the
            // writer goes on.
            try storage.insert(values, into: store)
        } catch let error as PersistenceError where Self.refusals.contains(error.code) && !transaction.sawMapFull {
            throw error
        } catch {
            // LMDB leaves a transaction that failed otherwise unusable: nothing of it is kept.
            let full = transaction.sawMapFull
            discard()
            throw full ? Self.mapFull(file) : error
        }
        // A put that filled the map reports nothing itself: the transaction is unusable from here.
        if transaction.sawMapFull {
            discard()
            throw Self.mapFull(file)
        }
    }

    package func commit() throws {
        guard !finished else { throw PersistenceError(.closed, "the new store \(file.path) is already finished") }
        finished = true
        do {
            // The nonce counter goes with the records it sealed.
            try storage.prepareCommit()
            storage.expire()
            if transaction.sawMapFull { throw Self.mapFull(file) }
            try transaction.commit()
            try environment.close()
            Self.remove(URL(fileURLWithPath: temporary.path + "-lock"))
            try NewStoreFile.moveIntoPlace(temporary, to: file)
        } catch {
            storage.expire()
            transaction.abort()
            try? environment.close()
            Self.remove(temporary)
            throw error
        }
    }

    package func discard() {
        guard !finished else { return }
        finished = true
        storage.expire()
        transaction.abort()
        try? environment.close()
        Self.remove(temporary)
    }

    /// What refuses one record and leaves the write usable.
    private static let refusals: Set<PersistenceError.Code> = [
        .duplicateKey, .uniqueViolation, .keyTooLarge, .invalidSchema, .invalidValue,
    ]

    /// Removes a temporary file and its lock file, if there.
    private static func remove(_ temporary: URL) {
        try? FileManager.default.removeItem(at: temporary)
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: temporary.path + "-lock"))
    }

    private static func mapFull(_ file: URL) -> PersistenceError {
        PersistenceError(
            .storageFull, "the new store \(file.path) did not fit its map; nothing of it was kept",
            nativeCode: MDB_MAP_FULL, nativeMessage: "MDB_MAP_FULL: Environment mapsize limit reached")
    }
}

@available(*, unavailable, message: "one write transaction, used from one thread at a time")
extension LMDBStoredStoreWriter: Sendable {}
