public import Foundation
import PersistenceSQLite

/// S8: a heavyweight SQLite migration of N records from schema version 1 (``Person``) to 2 (``MappedPerson``) —
/// `score` transformed by a mapping closure (points to integer hundredths), `email` removed, `karma` added with its
/// declared default, and the `name` index built again on the rebuilt table.
///
/// A migration consumes its store, so the parent seeds one version-1 store with the library
/// (``seed(directory:generator:)``) and each run migrates an identical copy of that file
/// (``migrate(directory:generator:)``): every implementation starts from the same bytes.
public enum MappingMigrationSubject: String, CaseIterable, Sendable {
    /// The table rebuild written by hand in the SQLite C API, in one transaction (see
    /// `RawSQLiteConnection.rebuildPersonTable(clock:)`).
    case raw = "raw"
    /// Persistence: `SQLiteBuilder.create()` with the version-2 model and a `MigrationPlan` holding the mapping
    /// model, the backup before a heavyweight migration turned off.
    case ours = "ours"
    /// The same with the backup on (the builder's default): SQLite's online backup copies the whole store first.
    case oursWithBackup = "ours+backup"

    /// The store's name: its file is `people.sqlite`, for every implementation.
    static let databaseName = "people"

    /// The store's file in `directory`.
    public static func storeFile(in directory: URL) -> URL {
        directory.appendingPathComponent(databaseName + ".sqlite")
    }

    /// Writes the generator's records (version 1, streamed) to a new store in `directory` with the library, in one
    /// transaction, and closes it (its WAL checkpointed into the file and removed).
    public static func seed(directory: URL, generator: PersonGenerator) throws {
        var builder = SQLiteBuilder(databaseName: databaseName, model: version1)
        builder.directory = directory
        try builder.create().write { context in try context.create(generator.people) }
    }

    /// Migrates the version-1 store in `directory`, timing the migration alone, then reads every record back.
    ///
    /// Timed: for ours, `create()` from its start to its return (opening, checking the stored schema, planning,
    /// the mapping pass, the rebuild, the commit); for raw, opening the connection, setting WAL and
    /// `synchronous = FULL` as the library does, and the transaction. Closing either store is not timed.
    /// Afterwards both stores are checked with the same C code (schema, `PRAGMA integrity_check`, every record),
    /// and ours is also read through the library (every record, and lookups by the rebuilt `name` index).
    /// - Throws: ``VerificationError`` when the migrated store isn't what the mapping model makes; the
    ///   implementation's errors.
    public func migrate(directory: URL, generator: PersonGenerator) throws -> MappingMigrationRun {
        let verify = Verifier(workload: "S8", implementation: rawValue)
        let clock = MigrationPhaseClock()
        var run = MappingMigrationRun()
        let file = Self.storeFile(in: directory)
        var libraryChecksum: Checksum?
        switch self {
        case .raw:
            clock.start()
            let connection = try RawSQLiteConnection(path: file.path)
            try connection.execute("PRAGMA journal_mode = WAL")
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.rebuildPersonTable(
                MappedPerson.rebuiltTable, beginCopy: clock.beginCopy, endCopy: clock.endCopy)
            (run.seconds, run.secondsBeforeCopy, run.secondsInCopy) = clock.finish()
            try SQLiteDurability.check(connection.integer("PRAGMA synchronous"), rawValue)
        case .ours, .oursWithBackup:
            var builder = SQLiteBuilder(databaseName: Self.databaseName, model: MappedPerson.version2)
            builder.directory = directory
            MappedPerson.configure(&builder)
            // The timed row leaves the backup out: it is a copy of the whole store (SQLite's online backup), which
            // the raw rebuild doesn't make either. `ours+backup` times the builder's default.
            builder.backsUpBeforeHeavyweightMigration = self == .oursWithBackup
            builder.migrationProgress = { progress in
                guard progress.stage == .mapping else { return }
                if progress.completed == 0 { clock.beginCopy() }
                if progress.completed == progress.total { clock.endCopy() }
            }
            clock.start()
            let db = try builder.create()
            (run.seconds, run.secondsBeforeCopy, run.secondsInCopy) = clock.finish()
            let steps = db.migrationReport?.steps ?? []
            try verify.expect(
                steps.count == 1 && steps.first?.kind == .mapped,
                "the migration report shows \(steps.map(\.description)), not one mapped step")
            let backupFile = try builder.migrationBackupFile(fromVersion: 1)
            let backup = FileManager.default.fileExists(atPath: backupFile.path)
            try verify.expect(
                backup == (self == .oursWithBackup), backup ? "a backup was made" : "no backup was made")
            var checksum = Checksum()
            try db.read { context in
                try context.forEach(MappedPerson.self, query: Query()) { $0.add(to: &checksum) }
            }
            libraryChecksum = checksum
            run.spotChecked = try db.spotCheckMigrated(MappedPerson.self, generator: generator, verify)
        }
        let reader = try RawSQLiteConnection(path: file.path)
        try reader.verifyMigratedSchema(MappedPerson.rebuiltTable, verify)
        try reader.forEachMigrated(MappedPerson.self, verify) { $0.add(to: &run.checksum) }
        if let libraryChecksum {
            try verify.expect(libraryChecksum, equals: run.checksum, "records read through the library")
        }
        return run
    }

    /// Version 1: the model the store is seeded with.
    private static let version1 = Model(version: 1, entities: [Person.self])
}
