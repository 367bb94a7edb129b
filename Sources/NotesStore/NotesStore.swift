import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite

/// An app's store executable made with PersistenceCommands: the same notes model on each backend, one command group
/// per backend (an app has one; this example shows all three), and `seed` to make a version-1 store to try them on.
@main
struct NotesStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes-store",
        abstract: "The notes app's store commands (an example of PersistenceCommands).",
        subcommands: [SQLiteNotes.command, LMDBNotes.command, PostgresNotes.command, Seed.self])
}

/// The notes app on SQLite: `notes-store sqlite migrate --dry-run Notes.sqlite`.
enum SQLiteNotes: StoreCommands {
    static var commandName: String { "sqlite" }

    static func builder(for store: StoreAddress) throws -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: try store.databaseName, model: Notes.model)
        builder.directory = try store.directory
        builder.migrationPlan = Notes.plan
        return builder
    }
}

/// The notes app on encrypted LMDB: `notes-store lmdb migrate Notes.lmdb --passphrase-env NOTES_PASSPHRASE`.
enum LMDBNotes: StoreCommands {
    static var commandName: String { "lmdb" }

    static func builder(for store: StoreAddress) throws -> LMDBBuilder {
        var builder = LMDBBuilder(
            databaseName: try store.databaseName, passphrase: try store.passphrase(), model: Notes.model)
        builder.directory = try store.directory
        builder.migrationBlock = Notes.migration
        return builder
    }
}

/// The notes app on PostgreSQL: `notes-store postgres migrate 'postgres://app@db/notes?schema=prod'`.
enum PostgresNotes: StoreCommands {
    static var commandName: String { "postgres" }

    static func builder(for store: StoreAddress) throws -> PostgresBuilder {
        var builder = try PostgresBuilder(url: try store.url, model: Notes.model)
        builder.schema = store.schema
        builder.password = try store.password()
        builder.migrationPlan = Notes.plan
        return builder
    }
}

/// `notes-store seed BACKEND STORE --count N`: a store as version 1 of the app left it.
struct Seed: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Make a version-1 notes store to try the commands on.")

    @Argument(help: "sqlite, lmdb or postgres.") var backend: String
    @Argument(help: "The store: NAME.sqlite, NAME.lmdb or postgres://USER@HOST/DATABASE?schema=NAME.") var store: String
    @Option(name: .long, help: "How many notes.") var count = 1_000
    @Option(name: .long, help: "An encrypted LMDB store's passphrase (or a server's password), from this variable.")
    var passphraseEnv: String?

    func run() throws {
        let secret = passphraseEnv.flatMap { ProcessInfo.processInfo.environment[$0] }
        let notes = (1...Int64(max(count, 1))).map(NoteV1.sample)
        let url = URL(fileURLWithPath: store)
        let name = url.deletingPathExtension().lastPathComponent
        switch backend {
        case "sqlite":
            var builder = SQLiteBuilder(databaseName: name, model: NoteV1.model)
            builder.directory = url.deletingLastPathComponent()
            try fill(builder.create(), notes)
        case "lmdb":
            guard let secret else { throw ValidationError("an LMDB notes store is encrypted: give --passphrase-env") }
            var builder = LMDBBuilder(databaseName: name, passphrase: secret, model: NoteV1.model)
            builder.directory = url.deletingLastPathComponent()
            try fill(builder.create(), notes)
        case "postgres":
            let locator = URLComponents(string: store)
            var builder = try PostgresBuilder(url: store, model: NoteV1.model)
            builder.schema = locator?.queryItems?.first { $0.name == "schema" }?.value ?? "public"
            builder.password = secret ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
            try fill(builder.create(), notes)
        default:
            throw ValidationError("the backend is sqlite, lmdb or postgres")
        }
    }

    private func fill(_ database: some Database, _ notes: [NoteV1]) throws {
        try database.write { try $0.create(notes) }
        try database.close()
    }
}
