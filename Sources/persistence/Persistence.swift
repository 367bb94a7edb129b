import ArgumentParser

/// The `persistence` command-line tool: the store tools (stores, inspect, verify, export, import, copy, hash) and a
/// guided demo.
@main
struct Persistence: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persistence",
        abstract: "Persistence: one data API, swappable storage backends — and the tool to look after its stores.",
        discussion: """
            A STORE is sqlite:PATH, lmdb:PATH (encrypted or plain), or a path ending in .sqlite or .lmdb. Stores are \
            opened read-only except by import and copy, which only make new ones. Passphrases never go on the \
            command line: --passphrase-file, --passphrase-env, or a prompt without echo.
            """,
        subcommands: [
            Demo.self, Stores.self, Inspect.self, Verify.self, Export.self, Import.self, Copy.self, Hash.self,
        ],
        defaultSubcommand: Demo.self
    )
}
