import ArgumentParser
import PersistencePostgres

/// The one record the concurrent-writer tests increment.
struct SharedCounter: Entity {
    var id: Int64
    var value: Int64
}

/// Where a Postgres command's store is: the server and the schema.
struct ServerStoreOptions: ParsableArguments {
    @Option(help: "The server's postgres:// URL.")
    var url: String

    @Option(help: "The PostgreSQL schema of the store.")
    var schema: String

    func open(_ entities: [any Entity.Type]) throws -> PostgresDatabase {
        var builder = try PostgresBuilder(url: url, model: Model(version: 1, entities: entities))
        builder.schema = schema
        return try builder.create()
    }
}

/// `postgres-increment`: increments the shared counter `count` times, each in a write run again on a conflict with
/// the other writers (`write(retrying: .collisions(for:))`), and prints how many times the write blocks ran.
struct PostgresIncrement: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-increment",
        abstract: "Increment a shared counter on a PostgreSQL store, retrying conflicts; print the attempts.")

    @OptionGroup var store: ServerStoreOptions

    @Option(help: "How many increments.")
    var count = 1000

    func run() throws {
        let db = try store.open([SharedCounter.self])
        var attempts = 0
        for _ in 0..<count {
            // Conflicts with the other writer, and refusals while a long write elsewhere on the server runs.
            try db.write(retrying: .collisions(for: .seconds(120))) { context in
                attempts += 1
                var counter = try context.recover(SharedCounter.self, id: 1) ?? SharedCounter(id: 1, value: 0)
                counter.value += 1
                try context.upsert(counter)
            }
        }
        print("attempts \(attempts)")
    }
}

/// `postgres-open`: opens (creating when needed) a store of the shared counter and prints `opened`.
struct PostgresOpen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-open", abstract: "Open (creating when needed) a PostgreSQL store; print `opened`.")

    @OptionGroup var store: ServerStoreOptions

    func run() throws {
        let db = try store.open([SharedCounter.self])
        // The other processes starting beside this one write the same record: a conflict is expected, and retried.
        try db.write(retrying: .collisions(for: .seconds(120))) { context in
            try context.upsert(SharedCounter(id: 1, value: 0))
        }
        print("opened")
    }
}

/// Version 2 of the migrating store's one entity: `value` was text in version 1 (`id`, `value: String`), and a
/// mapping model parses it; `note` is added.
struct MigratingItem: Entity {
    var id: Int64
    var value: Int64
    var note: String?
    static let indexes: [Index] = [.on("value")]
}

/// Version 1 of ``MigratingItem``, as it shipped.
enum MigratingItemV1 {
    struct MigratingItem: Entity {
        var id: Int64
        var value: String
    }
}

/// `postgres-migrate`: opens a store of `MigratingItem` version 1 with version 2 and its mapping model, then prints
/// `migrated <from> <to> <records rewritten>` when this process ran the migration or `opened` when it found it done,
/// and then `records <count> <sum of values>`.
struct PostgresMigrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres-migrate",
        abstract: "Open a version-1 PostgreSQL store with version 2, migrating it; print who migrated and the data.")

    @OptionGroup var store: ServerStoreOptions

    func run() throws {
        var builder = try PostgresBuilder(url: store.url, model: Model(version: 2, entities: [MigratingItem.self]))
        builder.schema = store.schema
        builder.migrationPlan = MigrationPlan(
            models: [Model(version: 1, entities: [MigratingItemV1.MigratingItem.self])],
            mappings: [
                MappingModel(
                    from: 1, to: 2,
                    [
                        .transform(
                            "MigratingItem", ["value": .value { source in Int64(try source.string("value") ?? "") }])
                    ]
                )
            ])
        let db = try builder.create()
        if let report = db.migrationReport {
            print(
                "migrated \(report.fromVersion) \(report.toVersion) "
                    + "\(report.entities.map(\.recordsRewritten).reduce(0, +))")
        } else {
            print("opened")
        }
        let items = try db.read { try $0.recover(MigratingItem.self) }
        print("records \(items.count) \(items.map(\.value).reduce(0, +))")
    }
}
