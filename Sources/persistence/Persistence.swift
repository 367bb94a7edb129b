import ArgumentParser

/// The `persistence` command-line tool: the store tools (stores, inspect, verify, export, import, copy, hash, rekey,
/// compact) and a guided demo.
@main
struct Persistence: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persistence",
        abstract: "Persistence: one data API, swappable storage backends — and the tool to look after its stores.",
        discussion: """
            A STORE is sqlite:PATH, lmdb:PATH (encrypted or plain), a path ending in .sqlite or .lmdb, or \
            postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME]. Stores are opened read-only, except that import and \
            copy make new ones and rekey and compact change one in place. Passphrases and passwords never go on the \
            command line: --passphrase-file, --passphrase-env, PGPASSWORD, or a prompt without echo.
            """,
        subcommands: [
            Demo.self, Stores.self, Inspect.self, Verify.self, Export.self, Import.self, Copy.self, Hash.self,
            Rekey.self, Compact.self,
        ],
        defaultSubcommand: Demo.self
    )
}
