public import ArgumentParser
import Foundation
public import PersistenceCore

/// The store commands an app adds to its own executable — `migrate` (and `migrate --dry-run`, a rehearsal on a
/// copy), `verify` and `export` — working through the app's builder: its model, its migration plan or migration
/// block, its passphrase handling. The generic `persistence` tool works from the schema a store holds; these work
/// from the app's code, so they can run its migrations and read records as its entity types.
///
/// An executable of its own takes five lines beside the builder the app already makes:
///
/// ```swift
/// import PersistenceCommands
/// import PersistenceSQLite
///
/// @main enum NotesStore: StoreCommands {
///     static func builder(for store: StoreAddress) throws -> SQLiteBuilder {
///         try Notes.builder(databaseName: store.databaseName, directory: store.directory)
///     }
/// }
/// ```
///
/// Or, in an executable that has commands already, add ``command`` to its subcommands:
/// `CommandConfiguration(subcommands: [Serve.self, NotesStore.command])` gives `app store migrate --dry-run …`.
public protocol StoreCommands {
    /// The app's builder: what opens (and migrates) its store.
    associatedtype Builder: MigratingDatabaseBuilder

    /// The app's builder for the store the operator named, configured as the app configures it (model, migration
    /// plan or block, options). Called once per command, before anything is opened.
    static func builder(for store: StoreAddress) throws -> Builder

    /// The name of the command group among an executable's subcommands (``command``): `store` unless given.
    static var commandName: String { get }
}

extension StoreCommands {
    public static var commandName: String { "store" }

    /// The command group, to list among an executable's subcommands.
    public static var command: any ParsableCommand.Type { StoreCommandGroup<Self>.self }

    /// Runs the commands as an executable's root command, so that `@main` can go on the conforming type.
    public static func main() {
        CommandLineRunner.main(StoreCommandRoot<Self>.self)
    }
}

/// The commands as a group among an executable's subcommands (see ``StoreCommands/command``).
public struct StoreCommandGroup<App: StoreCommands>: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: App.commandName, abstract: StoreCommandRoot<App>.abstract,
            subcommands: StoreCommandRoot<App>.subcommands)
    }

    public init() {}
}

/// The commands as an executable's root command (see ``StoreCommands/main()``).
struct StoreCommandRoot<App: StoreCommands>: ParsableCommand {
    static var abstract: String { "Migrate, rehearse a migration of, verify and export this app's store." }

    static var subcommands: [any ParsableCommand.Type] {
        [MigrateCommand<App>.self, VerifyCommand<App>.self, ExportCommand<App>.self]
    }

    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: PersistenceCommands.commandName, abstract: abstract, subcommands: subcommands)
    }
}

/// The arguments every embedded command takes: the store, and where its passphrase or password comes from.
struct StoreArguments: ParsableArguments {
    @Argument(help: "The store: its file (NAME.sqlite, NAME.lmdb) or postgres://USER@HOST/DATABASE?schema=NAME.")
    var store: String

    @OptionGroup var passphrase: PassphraseOptions

    /// The store, parsed.
    func address() throws -> StoreAddress {
        do {
            return try StoreAddress(store, secret: passphrase.source())
        } catch let error as PersistenceError {
            throw ValidationError(error.message)
        }
    }
}

extension StoreCommands {
    /// The app's builder for `arguments`' store, refusing a store that doesn't exist: no command here makes one.
    static func existingStoreBuilder(_ arguments: StoreArguments) throws -> Builder {
        let address = try arguments.address()
        if let file = address.locator.file { try StoreAccess.checkReadable(file) }
        let builder = try builder(for: address)
        guard try builder.storeExists() else {
            throw PersistenceError(.notFound, "there is no store of this app at \(address)")
        }
        return builder
    }

    /// The app's builder for a command that must not migrate (a check, an export): refuses a store that needs a
    /// migration, naming the versions.
    static func currentStoreBuilder(_ arguments: StoreArguments) throws -> Builder {
        let builder = try existingStoreBuilder(arguments)
        if let pending = try builder.pendingMigration() {
            throw PersistenceError(
                .migrationRequired,
                "the store is at schema version \(pending.lowerBound) and the app's model at \(pending.upperBound): "
                    + "run `migrate` first (rehearse it with `migrate --dry-run`)")
        }
        return builder
    }
}
