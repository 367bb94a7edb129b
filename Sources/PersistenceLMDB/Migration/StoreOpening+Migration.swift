internal import CLMDB
import Foundation
@_spi(PersistenceBackend) import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine

/// How an opening migrates a store: in steps that each commit (``SteppedWrite``), so that memory doesn't grow with the
/// store, into shadow databases the store doesn't read, then one small last step that switches to them
/// (``DatabaseNames``) with the new schema and version. A failure discards the shadows; a crash leaves them, with the
/// marker of the migration under way, for the next opening to discard — the store is fully old or fully new.
///
/// While a migration is under way its process holds a lock on `<store>.lmdb-migration` (``MigrationLock``): an
/// opening in another process meanwhile is `busy`, and an opening that finds the marker but no lock knows the
/// migration's process died.
extension StoreOpening {
    /// Runs the migration the store needs, if any: for real, or (`dryRun`) in one transaction rolled back at the end.
    /// - Returns: What the migration did; `nil` when the store needs none.
    func migrateIfNeeded(sealer: ValueSealer, dryRun: Bool, file: URL? = nil) throws -> MigrationReport? {
        // The plan is checked before anything touches the store, as on the SQL backends.
        let chain = try builder.migrationPlan.map { plan in
            try MigrationChain(
                plan: plan, model: builder.model, progress: builder.migrationProgress, positionalRecords: true)
        }
        let check = try environment.read { transaction -> SchemaCheck in
            try checkSchema(try existingMeta(transaction), transaction)
        }
        guard case .migration = check else { return nil }
        guard !isShared else {
            throw PersistenceError(
                .busy,
                "the store needs a migration to schema version \(builder.schemaVersion), but another database of "
                    + "this process has it open in the stored schema; migrate it before opening it elsewhere")
        }
        let lock = try dryRun ? nil : file.map(MigrationLock.init(store:))
        defer { lock?.release() }
        let token = Self.newToken()
        let known = environment.openDatabaseNames
        var writer: MigrationWriter?
        // Every step persists the nonce counter the migration reached.
        let persistNonces = { (transaction: Transaction) throws -> Void in try writer?.persistNonces(transaction) }
        do {
            let report = try environment.writeInSteps(
                commitsSteps: !dryRun, instrumentation: builder.instrumentation, beforeEachCommit: persistNonces
            ) { write -> MigrationReport? in
                let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: write.transaction)
                // Checked again under the write lock: another process may have migrated meanwhile.
                guard case .migration(let stored, let version, let runsBlock) = try checkSchema(meta, write.transaction)
                else { return nil }
                if !dryRun { try StoreMetadata.write(.migration, Data(token.utf8), meta, write.transaction) }
                let migrationWriter = try MigrationWriter(
                    write: write, environment: environment, sealer: sealer, token: token,
                    nonceCounter: sealer.isEncrypted
                        ? StoreMetadata.requiredNumber(.nonceCounter, meta, write.transaction) : 0)
                writer = migrationWriter
                let names = try DatabaseNames.read(meta, write.transaction)
                // A version bump with a plan runs the plan's steps; otherwise the block, or the inferred change (a
                // same-version opening only puts records in the model's attribute order).
                let switched: DatabaseNames
                let report: MigrationReport?
                if let chain, runsBlock {
                    (switched, report) = try runChain(
                        chain, stored: stored, from: version, writer: migrationWriter, names: names)
                } else {
                    (switched, report) = try runBlock(
                        stored: stored, from: version, runsBlock: runsBlock, writer: migrationWriter, names: names)
                }
                // The switch, in the last step: what reads the store sees the new databases from its commit on.
                let transaction = write.transaction
                try switched.write(meta, transaction)
                if !switched.remapped.isEmpty { try StoreMetadata.markMapped(meta, transaction) }
                try StoreMetadata.write(.schema, schemaJSON(), meta, transaction)
                try StoreMetadata.writeNumber(.schemaVersion, UInt64(builder.schemaVersion), meta, transaction)
                try StoreMetadata.delete(.migration, meta, transaction)
                try StoreMetadata.write(.migrated, Data(token.utf8), meta, transaction)
                return report
            }
            if dryRun {
                environment.forgetDatabaseHandles(openedSince: known)
            } else {
                // The databases the switch left behind: dropped now, or by the next opening after a crash.
                try collectGarbage()
            }
            return report
        } catch {
            environment.forgetDatabaseHandles(openedSince: known)
            if !dryRun { try? discardShadows(token: token) }
            throw error
        }
    }

    /// A migration block's run (or the inferred change without one): the names of the databases it leaves, and
    /// its report.
    private func runBlock(
        stored: [EntityDescription], from version: Int, runsBlock: Bool, writer: MigrationWriter,
        names: DatabaseNames
    ) throws -> (DatabaseNames, MigrationReport?) {
        let run = try MigrationRun(
            stored: stored, current: layouts, writer: writer, names: names, progress: builder.migrationProgress)
        try runCode(run, from: version, runsBlock: runsBlock)
        try run.finish()
        return (
            run.switchedNames(),
            try run.report(
                from: version, to: builder.schemaVersion, ranBlock: runsBlock && builder.migrationBlock != nil)
        )
    }

    /// A migration plan's steps from `version` to the model, planned (a step that can't be done is refused before
    /// any change) and run as on the SQL backends: the names of the databases they leave, and the chain's report
    /// (`nil` when no step changes anything but the version).
    private func runChain(
        _ chain: MigrationChain, stored: [EntityDescription], from version: Int, writer: MigrationWriter,
        names: DatabaseNames
    ) throws -> (DatabaseNames, MigrationReport?) {
        guard
            let plans = try chain.plans(
                stored: stored, storedVersion: version, model: builder.model, current: layouts)
        else { return (names, nil) }
        let steps = LMDBMigrationSteps(writer: writer, names: names)
        let report = try chain.run(plans, from: version, to: builder.schemaVersion) { plan in try steps.step(plan) }
        try writer.renameAliasTargets(steps.renamedEntities)
        return (steps.names, report)
    }

    /// The migration code: the builder's block (run exactly once) or, without one, the check that what the schema
    /// difference needs can be done without code.
    private func runCode(_ run: MigrationRun, from version: Int, runsBlock: Bool) throws {
        guard runsBlock, let block = builder.migrationBlock else {
            // The same answer as an inferred step on the SQL backends: `migrationRequired`, before any change.
            let blockers = try run.blockersWithoutCode()
            guard blockers.isEmpty else {
                throw PersistenceError(
                    .migrationRequired,
                    "migration step \(version) → \(builder.schemaVersion) can't be inferred: "
                        + blockers.joined(separator: "; ") + "; give the builder a migrationBlock that converts them")
            }
            return
        }
        try Migration.run(block, on: run, from: version, to: builder.schemaVersion)
    }

    // MARK: - What migrations leave behind

    /// Discards what an interrupted migration left — its shadows and marker — and databases a migration switched
    /// away from but didn't drop before its process ended. A migration still under way in another process is `busy`.
    func recoverFromInterruptedMigration(file: URL) throws {
        let (marker, garbage) = try environment.read { transaction in
            let meta = try existingMeta(transaction)
            return (try StoreMetadata.read(.migration, meta, transaction), try unreferencedDatabases(meta, transaction))
        }
        guard marker != nil || !garbage.isEmpty else { return }
        // The migrating process holds the lock until it ends: a free lock means it died.
        let lock = try marker.map { _ in try MigrationLock(store: file) }
        defer { lock?.release() }
        try environment.write { transaction in
            let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
            // Under the write lock, what is true now: another process may have begun a migration since.
            guard try StoreMetadata.read(.migration, meta, transaction) == marker else {
                throw PersistenceError(.busy, "another process began migrating the store; open it when it is done")
            }
            if let marker {
                let suffix = "@" + String(decoding: marker, as: UTF8.self)
                for name in try transaction.databaseNames() where name.hasSuffix(suffix) {
                    try environment.dropDatabase(named: name, in: transaction)
                }
                try StoreMetadata.delete(.migration, meta, transaction)
            }
            for name in try unreferencedDatabases(meta, transaction) {
                try environment.dropDatabase(named: name, in: transaction)
            }
        }
    }

    /// Drops the databases a finished migration switched away from, one transaction each (a large database's pages
    /// are freed without being read into memory).
    private func collectGarbage() throws {
        let garbage = try environment.read { transaction in
            try unreferencedDatabases(try existingMeta(transaction), transaction)
        }
        for name in garbage {
            try environment.write { transaction in try environment.dropDatabase(named: name, in: transaction) }
        }
    }

    /// Drops the shadows of the migration with `token` and its marker, after it failed.
    private func discardShadows(token: String) throws {
        let suffix = "@" + token
        try environment.write { transaction in
            for name in try transaction.databaseNames() where name.hasSuffix(suffix) {
                try environment.dropDatabase(named: name, in: transaction)
            }
            let meta = try environment.database(named: StoreMetadata.databaseName, flags: 0, in: transaction)
            if try StoreMetadata.read(.migration, meta, transaction) == Data(token.utf8) {
                try StoreMetadata.delete(.migration, meta, transaction)
            }
        }
    }

    /// Our entity and index databases that the stored schema doesn't use through the map, when no migration is
    /// under way (a migration's shadows are its own to keep or discard).
    private func unreferencedDatabases(_ meta: MDB_dbi, _ transaction: Transaction) throws -> [String] {
        guard try StoreMetadata.read(.migration, meta, transaction) == nil else { return [] }
        let used = try DatabaseNames.read(meta, transaction).physicalNames(of: Self.storedSchema(meta, transaction))
        return try transaction.databaseNames().filter { DatabaseNames.isEntityOrIndex($0) && !used.contains($0) }
    }

    /// The meta database of an existing store, in any transaction.
    private func existingMeta(_ transaction: Transaction) throws -> MDB_dbi {
        var dbi = MDB_dbi()
        try LMDBError.check(
            mdb_dbi_open(transaction.handle, StoreMetadata.databaseName, 0, &dbi), "could not open the store's metadata"
        )
        return dbi
    }

    /// A migration's token: what its shadows' names end in after `@`.
    private static func newToken() -> String {
        (0..<8).map { _ in String(UInt8.random(in: 0...15), radix: 16) }.joined()
    }
}

/// The lock a migrating process holds on `<store>.lmdb-migration` (`flock`, which ends with the process however it
/// ends), so that other processes can tell a migration under way from one whose process died. The file is removed
/// when the lock is released.
struct MigrationLock {
    private let descriptor: Int32
    private let path: String

    /// Takes the lock.
    /// - Throws: `busy` when another process holds it; `ioFailure` when the file can't be made.
    init(store: URL) throws {
        path = store.path + "-migration"
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PersistenceError(.ioFailure, "could not create the store's migration lock file")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw PersistenceError(
                .busy, "another process is migrating the store to a new schema version; open it when it is done")
        }
    }

    func release() {
        unlink(path)
        close(descriptor)
    }
}
