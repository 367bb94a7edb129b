public import Foundation
import PersistenceLMDB
import PersistenceSQLite

/// One implementation of a migration workload run in a child process of its own, so its peak memory belongs to that
/// migration alone: M2 (the migration block, ``MigrationChange/block``) on SQLite, plain and encrypted LMDB; S8's
/// mapping model (``MigrationChange/mapping``) on plain and encrypted LMDB, at N records (S8) and at 1,000,000 (M3).
/// Each of ours is compared with the raw rewrite of its own configuration (``baseline``), which makes the same change.
///
/// A migration consumes its store, so the parent seeds one store per implementation (``seed(directory:generator:)``,
/// in a child process) and gives each run a copy of it; each run migrates its copy
/// (``migrate(_:directory:generator:)``).
public enum MigrationSubject: String, CaseIterable, Sendable {
    /// SQLite's documented table rebuild written by hand in the C API, in one transaction, on a store the library
    /// seeded.
    case sqliteRaw = "sqlite-raw"
    /// Persistence's SQLite store, migrated by `SQLiteBuilder.create()`, the backup before a heavyweight migration
    /// turned off (raw makes no copy either).
    case sqliteOurs = "sqlite-ours"
    /// Raw C LMDB, values stored as encoded, as the L workloads' `raw`, rewriting every record in one transaction.
    case rawPlain = "lmdb-raw"
    /// Persistence's plain LMDB store, migrated by `LMDBBuilder.create()`.
    case oursPlain = "ours-plain"
    /// Raw C LMDB sealing each value with swift-crypto's one-shot AES-GCM, as the L workloads' `raw+aes-gcm`.
    case rawSealed = "raw+aes-gcm"
    /// Persistence's encrypted LMDB store, migrated by `LMDBBuilder.create()`.
    case oursEncrypted = "ours-encrypted"

    /// The LMDB implementations, plain then encrypted, each raw then ours.
    public static let lmdb: [MigrationSubject] = [.rawPlain, .oursPlain, .rawSealed, .oursEncrypted]

    /// Whether this is a raw baseline.
    public var isRaw: Bool { self == .sqliteRaw || self == .rawPlain || self == .rawSealed }

    /// The raw rewrite of the same configuration, which ours is compared with.
    public var baseline: MigrationSubject {
        switch self {
        case .sqliteRaw, .sqliteOurs: .sqliteRaw
        case .rawPlain, .oursPlain: .rawPlain
        case .rawSealed, .oursEncrypted: .rawSealed
        }
    }

    /// The suffix of the store's file that a copy leaves out: SQLite's shared-memory index, LMDB's lock file (each
    /// made anew when the copy opens).
    public var transientFileSuffix: String { baseline == .sqliteRaw ? "-shm" : "-lock" }

    /// The store's name (ours) and the store file's stem.
    static let databaseName = "ours"

    /// Writes the generator's records (version 1, streamed) to a new store in `directory`, in one transaction. Both
    /// SQLite implementations start from a store the library wrote, as S8's do.
    public func seed(directory: URL, generator: PersonGenerator) throws {
        switch self {
        case .sqliteRaw, .sqliteOurs:
            try Self.sqliteBuilder(directory: directory, model: Self.version1).create().write { context in
                try context.create(generator.people)
            }
        case .rawPlain:
            try RawLMDBStore<PlainValues>(directory: directory).put(streaming: generator.people)
        case .rawSealed:
            try RawLMDBStore<AESGCMValues>(directory: directory).put(streaming: generator.people)
        case .oursPlain, .oursEncrypted:
            try lmdbBuilder(directory: directory, model: Self.version1).create().write { context in
                try context.create(generator.people)
            }
        }
    }

    /// Migrates the store in `directory` — seeded with `generator`'s records — by `change`, timing the migration
    /// alone, then reads every record back for the parent to verify.
    ///
    /// Timed: for ours, `create()` with the version-2 model and the app's block or plan (opening, and for
    /// encrypted LMDB its Argon2id key derivation, included); for raw LMDB, opening the environment and the one
    /// write transaction that rewrites every record; for raw SQLite, opening the connection, setting WAL and
    /// `synchronous = FULL` as the library does, and the rebuild's transaction. The kernel's peak counter is reset
    /// when the pass over the records begins (for ours, at the migration's first progress report of a pass that
    /// writes records), so the peak leaves out opening; the anonymous memory before the migration is kept apart.
    /// - Throws: ``VerificationError`` when a record read back, looked up by id or name, or (SQLite) the schema
    ///   isn't what the change makes; the implementation's errors.
    public func migrate(_ change: MigrationChange, directory: URL, generator: PersonGenerator) throws
        -> MigrationReport
    {
        switch change {
        case .block: try migrate(to: MigratedPerson.self, directory: directory, generator: generator)
        case .mapping: try migrate(to: MappedPerson.self, directory: directory, generator: generator)
        }
    }

    private func migrate<Record: MigratedRecord>(
        to type: Record.Type, directory: URL, generator: PersonGenerator
    ) throws -> MigrationReport {
        let verify = Verifier(workload: Record.workload, implementation: rawValue)
        let sampler = MigrationSampler()
        var report = MigrationReport()
        var checksum = Checksum()
        func readBack(_ record: Record) {
            record.add(to: &checksum)
            if record.karma != Record.defaultKarma { report.wrongDefaults += 1 }
        }
        switch self {
        case .rawPlain:
            let store = try Self.rawMigrate(RawLMDBStore<PlainValues>.self, Record.self, directory, sampler, &report)
            try store.forEachMigrated(Record.self, readBack)
        case .rawSealed:
            let store = try Self.rawMigrate(RawLMDBStore<AESGCMValues>.self, Record.self, directory, sampler, &report)
            try store.forEachMigrated(Record.self, readBack)
        case .sqliteRaw:
            sampler.start()
            let (connection, seconds) = try Stopwatch.time {
                let connection = try RawSQLiteConnection(path: Self.sqliteFile(in: directory).path)
                try connection.execute("PRAGMA journal_mode = WAL")
                try connection.execute("PRAGMA synchronous = FULL")
                try connection.rebuildPersonTable(
                    Record.rebuiltTable, beginCopy: sampler.beginPass, endCopy: sampler.endPass)
                return connection
            }
            sampler.finish(into: &report, seconds: seconds)
            try SQLiteDurability.check(connection.integer("PRAGMA synchronous"), rawValue)
            try connection.verifyMigratedSchema(Record.rebuiltTable, verify)
            try connection.forEachMigrated(Record.self, verify, readBack)
        case .sqliteOurs:
            var builder = Self.sqliteBuilder(directory: directory, model: Record.version2)
            builder.backsUpBeforeHeavyweightMigration = false
            let db = try Self.oursMigrate(builder, Record.self, sampler, &report, verify)
            try db.read { context in try context.forEach(Record.self, query: Query(), readBack) }
            report.spotChecked = try db.spotCheckMigrated(Record.self, generator: generator, verify)
            // The same store read with the C API: its schema, and every record as the library read it.
            let reader = try RawSQLiteConnection(path: Self.sqliteFile(in: directory).path)
            try reader.verifyMigratedSchema(Record.rebuiltTable, verify)
            var readByC = Checksum()
            try reader.forEachMigrated(Record.self, verify) { $0.add(to: &readByC) }
            try verify.expect(checksum, equals: readByC, "records read with the C API")
        case .oursPlain, .oursEncrypted:
            let builder = lmdbBuilder(directory: directory, model: Record.version2)
            let db = try Self.oursMigrate(builder, Record.self, sampler, &report, verify)
            try db.read { context in try context.forEach(Record.self, query: Query(), readBack) }
            report.spotChecked = try db.spotCheckMigrated(Record.self, generator: generator, verify)
        }
        report.memory.rows = checksum.count
        report.memory.digest = String(checksum.digest, radix: 16)
        return report
    }

    /// Raw LMDB's timed migration: opening the environment and its one write transaction.
    private static func rawMigrate<Cipher: ValueCipher, Record: MigratedRecord>(
        _ store: RawLMDBStore<Cipher>.Type, _ record: Record.Type, _ directory: URL, _ sampler: MigrationSampler,
        _ report: inout MigrationReport
    ) throws -> RawLMDBStore<Cipher> {
        sampler.start()
        let (store, seconds) = try Stopwatch.time {
            let store = try RawLMDBStore<Cipher>(directory: directory)
            sampler.beginPass()
            _ = try store.migrate(to: Record.self, sampler: sampler)
            return store
        }
        sampler.finish(into: &report, seconds: seconds)
        return store
    }

    /// Ours' timed migration, the same on every backend: `create()` with the record's plan or block, the pass over
    /// the records marked from the migration's progress reports. Checks that the report shows one step to 2.
    private static func oursMigrate<Builder: MigratingDatabaseBuilder, Record: MigratedRecord>(
        _ builder: Builder, _ record: Record.Type, _ sampler: MigrationSampler, _ report: inout MigrationReport,
        _ verify: Verifier
    ) throws -> Builder.Database {
        var builder = builder
        Record.configure(&builder)
        builder.migrationProgress = { progress in
            guard progress.stage == .rewriting || progress.stage == .mapping else { return sampler.sample() }
            if progress.completed == 0 { sampler.beginPass() }
            sampler.sample()
            if progress.completed == progress.total { sampler.endPass() }
        }
        sampler.start()
        let (db, seconds) = try Stopwatch.time { try builder.create() }
        sampler.finish(into: &report, seconds: seconds)
        let versions = db.migrationReport.map { "\($0.fromVersion) → \($0.toVersion)" }
        try verify.expect(versions == "1 → 2", "the migration report shows \(versions ?? "no migration"), not 1 → 2")
        return db
    }

    /// Version 1: the model every store is seeded with.
    private static let version1 = Model(version: 1, entities: [Person.self])

    /// The SQLite store's file in `directory`.
    private static func sqliteFile(in directory: URL) -> URL {
        directory.appendingPathComponent(databaseName + ".sqlite")
    }

    private static func sqliteBuilder(directory: URL, model: Model) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: databaseName, model: model)
        builder.directory = directory
        return builder
    }

    /// Ours on LMDB, plain or encrypted as the subject, with the map as large as the raw baselines'.
    private func lmdbBuilder(directory: URL, model: Model) -> LMDBBuilder {
        var builder =
            self == .oursEncrypted
            ? LMDBBuilder(databaseName: Self.databaseName, passphrase: OursLMDBSubject.passphrase, model: model)
            : LMDBBuilder.unencrypted(databaseName: Self.databaseName, model: model)
        builder.directory = directory
        builder.initialMapSize = RawLMDBEnvironment.mapSize
        return builder
    }
}

/// What a migration workload changes, the same on every backend: M2's migration block or S8's mapping model.
public enum MigrationChange: String, CaseIterable, Sendable {
    /// M2: `bio` renamed `about` by a migration block, `karma` added with its declared default (``MigratedPerson``).
    case block
    /// S8: the mapping model — `score` transformed, `email` removed, `karma` added (``MappedPerson``).
    case mapping

    /// The checksum a migration of the generator's records must read back.
    public func expectedChecksum(_ generator: PersonGenerator) throws -> Checksum {
        switch self {
        case .block: try MigratedPerson.expectedChecksum(generator)
        case .mapping: try MappedPerson.expectedChecksum(generator)
        }
    }

    /// The added attribute's declared default, which every migrated record must hold.
    public var defaultKarma: Int {
        switch self {
        case .block: MigratedPerson.defaultKarma
        case .mapping: MappedPerson.defaultKarma
        }
    }
}
