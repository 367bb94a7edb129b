import ArgumentParser

/// `ReliabilityWorker`: the child process of the reliability tests.
///
/// The kill -9 test runs `commit` and kills it at random moments, then `check`s the store; the bit-flip test
/// `populate`s a store once, then `probe`s each damaged copy in a process of its own, so that a crash inside the
/// storage engine is counted rather than taking the test runner down. `rotate` changes an encrypted
/// store's passphrase back and forth, killed at random moments too; `migrate` migrates a store to a new schema
/// version, killed at random moments while it does. `postgres-increment` and `postgres-open` are the other processes
/// of the PostgreSQL concurrency tests; `sync-writer` commits to a synced store while it syncs, killed at random moments
/// by the sync tests.
@main
struct ReliabilityWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ReliabilityWorker",
        abstract: "Child process of the reliability tests (kill -9 loops, bit flips).",
        subcommands: [
            Commit.self, Check.self, Populate.self, Probe.self, Rotate.self, Migrate.self, PostgresIncrement.self,
            PostgresOpen.self, PostgresMigrate.self, SyncWriter.self,
        ]
    )
}
