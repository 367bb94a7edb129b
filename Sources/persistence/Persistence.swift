import ArgumentParser
import PersistenceCommands

/// The `persistence` command-line tool: the store tools (stores, inspect, verify, export, import, copy, hash, rekey,
/// compact) and a guided demo (`persistence demo`). Without a command it prints its help.
///
/// Every error is one line on standard error (see `CommandLineRunner`).
@main
struct Persistence: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persistence",
        abstract: "Persistence: one data API, swappable storage backends — and the tool to look after its stores.",
        discussion: """
            A STORE is sqlite:PATH, lmdb:PATH (encrypted or plain), a path ending in .sqlite or .lmdb, or \
            postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME]. Stores are opened read-only, except that import and \
            copy make new ones and rekey and compact change one in place. Passphrases and passwords never go on the \
            command line: --passphrase-file, --passphrase-env, PGPASSWORD, or a prompt without echo. An LMDB store \
            is read in a child process by every command that reads one (stores, inspect, verify, export, copy, hash, \
            rekey, compact): a file damaged enough to crash the storage engine ends that process, and the command \
            exits with a status (65; verify 2) instead of crashing. Every error is one line on standard error.
            """,
        subcommands: [
            Demo.self, Stores.self, Inspect.self, Verify.self, Export.self, Import.self, Copy.self, Hash.self,
            Rekey.self, Compact.self, SyncVerify.self,
        ]
    )

    static func main() async { await CommandLineRunner.main(Self.self) }
}
