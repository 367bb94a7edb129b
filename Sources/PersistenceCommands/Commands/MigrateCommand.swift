import ArgumentParser
import Foundation
import PersistenceCore

/// `migrate STORE`: the app's migration, run on the store — or with `--dry-run`, rehearsed on a copy.
struct MigrateCommand<App: StoreCommands>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "migrate",
            abstract: "Migrate the store to the app's model — or rehearse it on a copy with --dry-run.",
            discussion: """
                Runs the migration the app runs when it opens the store: every step of its migration plan (SQLite, \
                PostgreSQL) or its migration block (LMDB), all or nothing. With --dry-run, a store file is copied \
                (one consistent snapshot; the app may keep using the store), the copy migrated and verified, the \
                report and timings printed, and the copy deleted: the store is left untouched. A PostgreSQL store is \
                rehearsed on the server in one transaction that is rolled back. Ctrl-C rolls a migration back.
                """)
    }

    @OptionGroup var arguments: StoreArguments
    @Flag(name: .long, help: "Rehearse on a copy (a rolled-back transaction on PostgreSQL); change nothing.")
    var dryRun = false
    @Option(name: .long, help: "Where --dry-run puts its copy (default: the system's temporary directory).")
    var workDirectory: String?
    @Flag(name: .long, help: "Print the outcome as JSON.") var json = false
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false

    func run() throws {
        let outcome = try reportingErrors(arguments.store) { () throws -> MigrationOutcome in
            let builder = try App.existingStoreBuilder(arguments)
            let store = try arguments.address().description
            guard let pending = try builder.pendingMigration() else {
                return MigrationOutcome(store: store, mode: dryRun ? .rehearsal : .migration, current: builder.model)
            }
            if dryRun, let fileBuilder = builder as? any FileBackedDatabaseBuilder {
                return try rehearse(fileBuilder, store: store, pending: pending)
            }
            var migrating = builder
            let progress = MigrationProgressPrinter(quiet: quiet)
            migrating.migrationProgress = progress.handler
            defer { progress.finish() }
            let clock = ContinuousClock()
            let start = clock.now
            if dryRun {
                let report = try migrating.dryRunMigration()
                return MigrationOutcome(
                    store: store, mode: .rollback, pending: pending, report: report,
                    seconds: .init(migration: (clock.now - start).seconds))
            }
            let database = try migrating.create()
            let report = database.migrationReport
            try database.close()
            return MigrationOutcome(
                store: store, mode: .migration, pending: pending, report: report,
                seconds: .init(migration: (clock.now - start).seconds))
        }
        try outcome.print(json: json)
    }

    /// Copies the store into a scratch directory, migrates and verifies the copy, and deletes it.
    private func rehearse<Builder: FileBackedDatabaseBuilder>(
        _ builder: Builder, store: String, pending: ClosedRange<Int>
    ) throws -> MigrationOutcome {
        let base =
            workDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory
        let scratch = base.appendingPathComponent("persistence-rehearsal-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false)
        } catch {
            throw PersistenceError(
                .directoryNotFound, "the rehearsal's copy can't be made in \(base.path)", underlyingError: error)
        }
        defer { try? FileManager.default.removeItem(at: scratch) }
        let clock = ContinuousClock()
        var seconds = MigrationOutcome.Seconds(migration: 0)
        var start = clock.now
        try builder.copyStore(into: scratch)
        seconds.copy = (clock.now - start).seconds

        var copy = builder
        copy.directory = scratch
        let progress = MigrationProgressPrinter(quiet: quiet)
        copy.migrationProgress = progress.handler
        start = clock.now
        let database: Builder.Database
        do {
            defer { progress.finish() }
            database = try copy.create()
        }
        seconds.migration = (clock.now - start).seconds
        let report = database.migrationReport
        start = clock.now
        let verification = try database.verify()
        seconds.verification = (clock.now - start).seconds
        try database.close()
        var outcome = MigrationOutcome(
            store: store, mode: .rehearsal, pending: pending, report: report, seconds: seconds)
        outcome.verification = verification
        return outcome
    }
}
