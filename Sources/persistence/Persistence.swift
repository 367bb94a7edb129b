import ArgumentParser

/// The `persistence` command-line tool: a guided demo now, store tools (inspect, verify, migrate, export) later.
@main
struct Persistence: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "persistence",
        abstract: "Persistence: one data API, swappable storage backends.",
        subcommands: [Demo.self],
        defaultSubcommand: Demo.self
    )
}
