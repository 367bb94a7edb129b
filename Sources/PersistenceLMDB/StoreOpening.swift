internal import CLMDB
import Foundation
import PersistenceCore

/// The steps of opening a store, in order: read the metadata, derive and check the key, then create or check.
struct StoreOpening {
    let builder: LMDBBuilder
    let environment: Environment
    let layouts: [RecordLayout]
    /// Whether another database of this process has the store open (it reads records in the stored schema).
    let isShared: Bool
    /// The opening's hold on the store file, handed to the database.
    let registration: StoreFiles.StoreRegistration

    private struct Stored {
        var format: UInt64?
        var keyRecord: StoreKeyRecord?
        var schemaVersion: Int?
    }

    /// Another process created the store between reading its metadata and writing it: open again, with its keys.
    private struct CreatedMeanwhile: Error {}

    /// Ends a dry run's transaction, so that it rolls back.
    private struct DryRunFinished: Error {}

    func open(file: URL) throws -> LMDBDatabase {
        var attempts = 0
        while true {
            do {
                return try openOnce(file: file)
            } catch is CreatedMeanwhile where attempts < 3 {
                attempts += 1
            } catch is CreatedMeanwhile {
                throw PersistenceError(.busy, "another process kept creating the store at the same time")
            }
        }
    }

    /// Runs the migration opening would run, then rolls it back; `nil` when the store needs none.
    func dryRun() throws -> MigrationReport? {
        try environment.writer.withLock {
            let stored = try readMetadata()
            guard stored.format != nil else { return nil }
            let sealer = ValueSealer(keys: try existingKeys(stored).map(\.keys))
            var report: MigrationReport?
            let known = environment.openDatabaseNames
            do {
                try environment.write(reservingMultipleOfUsed: 4) { transaction in
                    let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
                    report = try checkSchema(meta, transaction, sealer: sealer)
                    throw DryRunFinished()
                }
            } catch is DryRunFinished {
                environment.forgetDatabaseHandles(openedSince: known)
            }
            return report
        }
    }

    private func openOnce(file: URL) throws -> LMDBDatabase {
        try environment.writer.withLock {
            let stored = try readMetadata()
            // Derive the key before any write: a wrong passphrase leaves the file untouched.
            let keys = try stored.format == nil ? newKeys() : existingKeys(stored)
            let sealer = ValueSealer(keys: keys.map(\.keys))
            var stores: [EntityStore] = []
            var metaDBI = MDB_dbi()
            var aliasDBI = MDB_dbi()
            var migration: MigrationReport?
            // A migration writes every changed record, in two forms when the block enumerates: while its transaction
            // is open, the old pages stay too. Make room ahead, as a write can't grow the map (nor run twice).
            let migrates = stored.format != nil && (stored.schemaVersion ?? 0) < builder.schemaVersion
            // Handles of databases first opened in a transaction that rolls back are closed with it: forget them.
            let known = environment.openDatabaseNames
            defer { if stores.isEmpty { environment.forgetDatabaseHandles(openedSince: known) } }
            try environment.write(reservingMultipleOfUsed: migrates ? 4 : 0) { transaction in
                metaDBI = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
                let current = try StoreMetadata.readNumber(.format, metaDBI, transaction)
                if current == nil {
                    try initialize(metaDBI, transaction, keyRecord: keys?.record)
                } else if stored.format == nil {
                    // New keys would not open what the other process sealed (format-2 keys are random).
                    throw CreatedMeanwhile()
                } else {
                    migration = try checkSchema(metaDBI, transaction, sealer: sealer)
                }
                aliasDBI = try environment.database(named: LMDBContext.aliasDatabaseName, flags: 0, in: transaction)
                stores = try layouts.map {
                    try EntityStore(layout: $0, environment: environment, transaction: transaction)
                }
            }
            if let migration {
                builder.instrumentation.migrated(
                    from: migration.fromVersion, to: migration.toVersion, summary: migration.description)
            }
            return LMDBDatabase(
                fileURL: file, environment: environment, registration: registration,
                stores: EntityStores(model: builder.model, stores: stores),
                sealer: sealer, metaDBI: metaDBI, aliasDBI: aliasDBI, instrumentation: builder.instrumentation,
                migrationReport: migration)
        }
    }

    private func readMetadata() throws -> Stored {
        try environment.read { transaction in
            // The meta database may not exist yet: look it up without creating it.
            var dbi = MDB_dbi()
            let code = mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &dbi)
            if code == MDB_NOTFOUND { return Stored() }
            try LMDBError.check(code, "could not open the store's metadata")
            var stored = Stored()
            stored.format = try StoreMetadata.readNumber(.format, dbi, transaction)
            if let format = stored.format, format > StoreMetadata.formatVersion {
                throw PersistenceError(
                    .unsupportedFormatVersion,
                    "the store has format version \(format); this version of Persistence reads up to "
                        + "\(StoreMetadata.formatVersion)")
            }
            if let format = stored.format {
                stored.keyRecord = try StoreKeyRecord.read(format: format, dbi, transaction)
            }
            stored.schemaVersion = try StoreMetadata.readNumber(.schemaVersion, dbi, transaction).map(Self.version)
            return stored
        }
    }

    /// A stored schema version (8 bytes in the metadata) as the `Int` of ``Model/version``; one no `Int` holds is
    /// damage.
    private static func version(_ stored: UInt64) throws -> Int {
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

    private func existingKeys(_ stored: Stored) throws -> (keys: StoreKeys, record: StoreKeyRecord)? {
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

    private func schemaJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(layouts.map(\.entity))
    }

    private func initialize(_ meta: MDB_dbi, _ transaction: Transaction, keyRecord: StoreKeyRecord?) throws {
        try StoreMetadata.write(.schema, schemaJSON(), meta, transaction)
        try StoreMetadata.writeNumber(.schemaVersion, UInt64(builder.schemaVersion), meta, transaction)
        if let keyRecord {
            // Writes the format that goes with the record.
            try keyRecord.write(meta, transaction)
            try StoreMetadata.writeNumber(.nonceCounter, 0, meta, transaction)
        } else {
            // An unencrypted store has nothing format 2 added: it stays readable by versions that read format 1.
            try StoreMetadata.writeNumber(.format, StoreMetadata.derivedKeyFormat, meta, transaction)
        }
    }

    /// Checks the stored schema and version against the model, and migrates a store written with an older version
    /// in the opening transaction: the builder's migration block (run exactly once), then what the schema difference
    /// does alone (see ``MigrationRun``).
    private func checkSchema(_ meta: MDB_dbi, _ transaction: Transaction, sealer: ValueSealer) throws
        -> MigrationReport?
    {
        let storedVersion = try Self.version(StoreMetadata.requiredNumber(.schemaVersion, meta, transaction))
        guard storedVersion <= builder.schemaVersion else {
            throw PersistenceError(
                .invalidConfiguration,
                "the store has schema version \(storedVersion), newer than this builder's \(builder.schemaVersion)")
        }
        guard let json = try StoreMetadata.read(.schema, meta, transaction),
            let stored = try? JSONDecoder().decode([EntityDescription].self, from: json)
        else {
            throw PersistenceError(.corrupt, "the store's metadata has no readable schema")
        }
        let difference = SchemaDifference(stored: stored, current: layouts.map(\.entity))
        // Records hold their values in attribute order: properties declared in another order are no schema change,
        // but the records are rewritten in the new order (else they would read each other's values).
        let reordered = stored.contains { entity in
            layouts.first { $0.entity.name == entity.name }.map { $0.names != entity.attributes.map(\.name) } ?? false
        }
        guard storedVersion < builder.schemaVersion else {
            guard difference.isEmpty else {
                throw PersistenceError(
                    .migrationRequired,
                    "the model's schema differs from the store's, but both are schema version \(storedVersion): "
                        + difference.summary + "; bump the schema version (model.version) to migrate")
            }
            guard reordered else { return nil }
            return try migrate(
                from: stored, version: storedVersion, meta, transaction, sealer: sealer, runsBlock: false)
        }
        // Only the version changes: nothing to report, as on the SQL backends.
        var report: MigrationReport?
        if builder.migrationBlock != nil || !difference.isEmpty || reordered {
            report = try migrate(
                from: stored, version: storedVersion, meta, transaction, sealer: sealer, runsBlock: true)
        }
        try StoreMetadata.writeNumber(.schemaVersion, UInt64(builder.schemaVersion), meta, transaction)
        return report
    }

    private func migrate(
        from stored: [EntityDescription], version: Int, _ meta: MDB_dbi, _ transaction: Transaction,
        sealer: ValueSealer, runsBlock: Bool
    ) throws -> MigrationReport {
        guard !isShared else {
            throw PersistenceError(
                .busy,
                "the store needs a migration to schema version \(builder.schemaVersion), but another database of "
                    + "this process has it open in the stored schema; migrate it before opening it elsewhere")
        }
        let run = try MigrationRun(
            stored: stored, current: layouts, transaction: transaction, environment: environment, sealer: sealer,
            nonceCounter: sealer.isEncrypted ? StoreMetadata.requiredNumber(.nonceCounter, meta, transaction) : 0,
            progress: builder.migrationProgress)
        if runsBlock, let block = builder.migrationBlock {
            let migration = Migration(run: run, oldSchemaVersion: version, newSchemaVersion: builder.schemaVersion)
            defer { migration.close() }
            do {
                try block(migration, version)
            } catch let cancellation as CancellationError where CancellationFlag.current?.isCancelled == true {
                // The awaiting task was cancelled: not a failure of the migration code (which, throwing
                // CancellationError of its own accord, still fails as migrationFailed).
                throw cancellation
            } catch {
                throw Self.blockFailed(error, from: version, to: builder.schemaVersion)
            }
        } else {
            // The same answer as an inferred step on the SQL backends: `migrationRequired`, before any change.
            let blockers = try run.blockersWithoutCode()
            guard blockers.isEmpty else {
                throw PersistenceError(
                    .migrationRequired,
                    "migration step \(version) → \(builder.schemaVersion) can't be inferred: "
                        + blockers.joined(separator: "; ") + "; give the builder a migrationBlock that converts them")
            }
        }
        try run.finish(meta: meta)
        try StoreMetadata.write(.schema, schemaJSON(), meta, transaction)
        return try run.report(
            from: version, to: builder.schemaVersion,
            ranBlock: runsBlock && builder.migrationBlock != nil)
    }

    /// What `create()` throws for an error of the migration block: `migrationFailed` keeping the cause, except a
    /// full map (`storageFull`: the store is unchanged and the map grown, so opening again can succeed).
    private static func blockFailed(_ error: any Error, from old: Int, to new: Int) -> PersistenceError {
        let step = "the migration block failed migrating schema version \(old) to \(new)"
        guard let cause = error as? PersistenceError else {
            return PersistenceError(
                .migrationFailed, step + ": it threw \(type(of: error)); nothing was changed", underlyingError: error)
        }
        if cause.code == .storageFull { return cause }
        var wrapped = PersistenceError(
            .migrationFailed, step + ": " + cause.message + "; nothing was changed", nativeCode: cause.nativeCode,
            nativeMessage: cause.nativeMessage, underlyingError: cause)
        if cause.code == .migrationFailed { wrapped.underlyingError = cause.underlyingError ?? cause }
        return wrapped
    }
}
