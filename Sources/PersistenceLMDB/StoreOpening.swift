internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// The steps of opening a store, in order: read the metadata, derive and check the key, then create or check.
struct StoreOpening {
    let builder: LMDBBuilder
    let environment: Environment
    let layouts: [RecordLayout]
    /// Whether another database of this process has the store open (it reads records in the stored schema).
    let isShared: Bool
    /// The opening's hold on the store file, handed to the database.
    let registration: StoreFiles.StoreRegistration

    struct Stored {
        var format: UInt64?
        var keyRecord: StoreKeyRecord?
        var schemaVersion: Int?
    }

    /// Another process created the store between reading its metadata and writing it: open again, with its keys.
    private struct CreatedMeanwhile: Error {}

    /// The store needed a migration by the time the opening transaction began (another process changed it since this
    /// one looked): open again, migrating first.
    private struct MigrationNeeded: Error {}

    func open(file: URL) throws -> LMDBDatabase {
        var attempts = 0
        while true {
            do {
                return try openOnce(file: file)
            } catch is CreatedMeanwhile where attempts < 3 {
                attempts += 1
            } catch is MigrationNeeded where attempts < 3 {
                attempts += 1
            } catch is CreatedMeanwhile, is MigrationNeeded {
                throw PersistenceError(.busy, "other processes kept changing the store while it opened")
            }
        }
    }

    /// Runs the migration opening would run, then rolls it back; `nil` when the store needs none.
    func dryRun() throws -> MigrationReport? {
        try environment.writer.withLock {
            let stored = try readMetadata()
            guard stored.format != nil else { return nil }
            let sealer = ValueSealer(keys: try existingKeys(stored).map(\.keys))
            return try migrateIfNeeded(sealer: sealer, dryRun: true)
        }
    }

    /// The schema versions of the migration opening would run (the stored one, and the builder's), read without
    /// running it or writing anything; `nil` when the store is new or current.
    func pendingMigration() throws -> ClosedRange<Int>? {
        try environment.read { transaction -> ClosedRange<Int>? in
            var dbi = MDB_dbi()
            let code = mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &dbi)
            if code == MDB_NOTFOUND { return nil }
            try LMDBError.check(code, "could not open the store's metadata")
            guard try StoreMetadata.readNumber(.format, dbi, transaction) != nil else { return nil }
            switch try checkSchema(dbi, transaction) {
            case .current:
                return nil
            case .versionOnly:
                let stored = try StoreMetadata.readNumber(.schemaVersion, dbi, transaction).map(Self.version)
                return (stored ?? builder.schemaVersion)...builder.schemaVersion
            case .migration(_, let version, _):
                return version...builder.schemaVersion
            }
        }
    }

    private func openOnce(file: URL) throws -> LMDBDatabase {
        try environment.writer.withLock {
            let stored = try readMetadata()
            // Derive the key before any write: a wrong passphrase leaves the file untouched.
            let keys = try stored.format == nil ? newKeys() : existingKeys(stored)
            let sealer = ValueSealer(keys: keys.map(\.keys))
            var migration: MigrationReport?
            if stored.format != nil {
                // What an interrupted migration left is discarded first; a migration under way elsewhere is `busy`.
                try recoverFromInterruptedMigration(file: file)
                migration = try migrateIfNeeded(sealer: sealer, dryRun: false, file: file)
            }
            var stores: [EntityStore] = []
            var metaDBI = MDB_dbi()
            var aliasDBI = MDB_dbi()
            var stamp: MigrationStamp?
            // Handles of databases first opened in a transaction that rolls back are closed with it: forget them.
            let known = environment.openDatabaseNames
            defer { if stores.isEmpty { environment.forgetDatabaseHandles(openedSince: known) } }
            try environment.write { transaction in
                metaDBI = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
                let current = try StoreMetadata.readNumber(.format, metaDBI, transaction)
                if current == nil {
                    try initialize(metaDBI, transaction, keyRecord: keys?.record)
                } else if stored.format == nil {
                    // New keys would not open what the other process sealed (format-2 keys are random).
                    throw CreatedMeanwhile()
                } else {
                    switch try checkSchema(metaDBI, transaction) {
                    case .current:
                        break
                    case .versionOnly:
                        try StoreMetadata.writeNumber(
                            .schemaVersion, UInt64(builder.schemaVersion), metaDBI, transaction)
                    case .migration:
                        throw MigrationNeeded()
                    }
                }
                let names = try DatabaseNames.read(metaDBI, transaction)
                stamp = try MigrationStamp(metaDBI, transaction, schemaVersion: builder.schemaVersion)
                aliasDBI = try environment.database(named: LMDBStorage.aliasDatabaseName, flags: 0, in: transaction)
                stores = try layouts.map {
                    try EntityStore(
                        layout: $0, names: names.physical, environment: environment, transaction: transaction)
                }
            }
            if let migration {
                builder.instrumentation.migrated(
                    from: migration.fromVersion, to: migration.toVersion, steps: migration.steps.count,
                    summary: migration.description)
            }
            guard let stamp else { throw PersistenceError(.backend, "the store's opening transaction did not run") }
            return LMDBDatabase(
                fileURL: file, environment: environment, registration: registration,
                stores: try EntityLookup(model: builder.model, storage: stores),
                sealer: sealer, metaDBI: metaDBI, aliasDBI: aliasDBI, stamp: stamp,
                instrumentation: builder.instrumentation, migrationReport: migration)
        }
    }

    func readMetadata() throws -> Stored {
        try environment.read { transaction in
            // The meta database may not exist yet: look it up without creating it.
            var dbi = MDB_dbi()
            let code = mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &dbi)
            if code == MDB_NOTFOUND { return Stored() }
            try LMDBError.check(code, "could not open the store's metadata")
            var stored = Stored()
            stored.format = try StoreMetadata.readNumber(.format, dbi, transaction)
            if let format = stored.format {
                try StoreGate.check(format: Int64(clamping: format), formats: StoreMetadata.formats)
            }
            if let format = stored.format {
                let keyFormat = try StoreMetadata.keyFormat(of: format, dbi, transaction)
                stored.keyRecord = try StoreKeyRecord.read(format: keyFormat, dbi, transaction)
            }
            stored.schemaVersion = try StoreMetadata.readNumber(.schemaVersion, dbi, transaction).map(Self.version)
            return stored
        }
    }

    /// A stored schema version (8 bytes in the metadata) as the `Int` of ``Model/version``; one no `Int` holds is
    /// damage.
    static func version(_ stored: UInt64) throws -> Int {
        guard let version = Int(exactly: stored) else {
            throw PersistenceError(.corrupt, "the store's schema version is out of range: the metadata is damaged")
        }
        return version
    }

    private func newKeys() throws -> (keys: StoreKeys, record: StoreKeyRecord)? {
        guard let passphrase = builder.passphrase else { return nil }
        let (keys, record) =
            try builder.createsDerivedKeyFormat
            ? StoreKeyRecord.newDerived(passphrase: passphrase, parameters: builder.keyDerivation)
            : StoreKeyRecord.new(
                passphrase: passphrase, parameters: builder.keyDerivation, cipher: builder.valueCipher,
                portableAES: builder.usesPortableAES)
        return (keys, record)
    }

    func existingKeys(_ stored: Stored) throws -> (keys: StoreKeys, record: StoreKeyRecord)? {
        switch (stored.keyRecord, builder.passphrase) {
        case (nil, nil):
            return nil
        case (nil, _?):
            throw PersistenceError(
                .invalidConfiguration, "the store is not encrypted; open it with LMDBBuilder.unencrypted")
        case (_?, nil):
            builder.instrumentation.authenticationFailed(passphrase: true)
            throw PersistenceError(.wrongPassphrase, "the store is encrypted and no passphrase was given")
        case (let record?, let passphrase?):
            do {
                return (try record.unlock(passphrase: passphrase, portableAES: builder.usesPortableAES), record)
            } catch let error as PersistenceError where error.code == .wrongPassphrase {
                builder.instrumentation.authenticationFailed(passphrase: true)
                throw error
            }
        }
    }

    func schemaJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(layouts.map(\.entity))
    }

    private func initialize(_ meta: MDB_dbi, _ transaction: Transaction, keyRecord: StoreKeyRecord?) throws {
        try Self.initialize(
            meta, transaction, schema: schemaJSON(), schemaVersion: builder.schemaVersion, keyRecord: keyRecord)
    }

    /// Writes a new store's metadata: its schema (JSON), schema version, and its key record with a nonce counter at
    /// 0 (encrypted) or format 1 (unencrypted). The one definition, for new stores opened by a builder and those
    /// filled by ``LMDBStoredStoreWriter``.
    static func initialize(
        _ meta: MDB_dbi, _ transaction: Transaction, schema: Data, schemaVersion: Int, keyRecord: StoreKeyRecord?
    ) throws {
        try StoreMetadata.write(.schema, schema, meta, transaction)
        try StoreMetadata.writeNumber(.schemaVersion, UInt64(schemaVersion), meta, transaction)
        if let keyRecord {
            // Writes the format that goes with the record.
            try keyRecord.write(meta, transaction)
            try StoreMetadata.writeNumber(.nonceCounter, 0, meta, transaction)
        } else {
            // An unencrypted store has nothing format 2 added: it stays readable by versions that read format 1.
            try StoreMetadata.writeNumber(.format, StoreMetadata.derivedKeyFormat, meta, transaction)
        }
    }

    /// What the stored schema and version ask of an opening.
    enum SchemaCheck {
        /// The store is at the model's version and schema.
        case current
        /// Only the version is older: the opening writes the new one (no block runs, nothing to report).
        case versionOnly
        /// A migration from `version`, running the builder's block when `runsBlock` (a version bump), or only
        /// rewriting records declared in another order (same version).
        case migration(stored: [EntityDescription], version: Int, runsBlock: Bool)
    }

    /// Checks the stored schema and version against the model.
    /// - Throws: `invalidConfiguration` for a newer store, `migrationRequired` for a changed schema at the same
    ///   version, `corrupt` for missing or unreadable metadata.
    func checkSchema(_ meta: MDB_dbi, _ transaction: Transaction) throws -> SchemaCheck {
        let metadata = StoreGate.Metadata(
            format: try StoreMetadata.readNumber(.format, meta, transaction).map { Int64(clamping: $0) },
            schema: try StoreMetadata.read(.schema, meta, transaction),
            version: try StoreMetadata.readNumber(.schemaVersion, meta, transaction).map(Self.version))
        let current = layouts.map(\.entity)
        switch try StoreGate.decide(metadata, formats: StoreMetadata.formats, model: builder.model, current: current) {
        case .create:
            throw PersistenceError(.corrupt, "the store's metadata has no format version: the store is damaged")
        case .open(let stored):
            // Records hold their values in attribute order: properties declared in another order are no schema
            // change, but the records are rewritten in the new order (else they would read each other's values).
            return reordered(stored)
                ? .migration(stored: stored, version: builder.schemaVersion, runsBlock: false) : .current
        case .migrate(let version, let stored):
            // Only the version changes: nothing to migrate or report, as on the SQL backends.
            let changed =
                builder.migrationBlock != nil || builder.migrationPlan != nil || !StoreGate.sameSchema(stored, current)
                || reordered(stored)
            return changed ? .migration(stored: stored, version: version, runsBlock: true) : .versionOnly
        }
    }

    /// Whether an entity of the stored schema holds its attributes in another order than the model declares them.
    private func reordered(_ stored: [EntityDescription]) -> Bool {
        stored.contains { entity in
            layouts.first { $0.entity.name == entity.name }.map { $0.names != entity.attributes.map(\.name) } ?? false
        }
    }

    /// The schema stored with the data.
    static func storedSchema(_ meta: MDB_dbi, _ transaction: Transaction) throws -> [EntityDescription] {
        guard let json = try StoreMetadata.read(.schema, meta, transaction),
            let stored = try? JSONDecoder().decode([EntityDescription].self, from: json)
        else {
            throw PersistenceError(.corrupt, "the store's metadata has no readable schema")
        }
        return stored
    }
}
