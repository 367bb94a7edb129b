import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// Creates a new store's tables and checks an existing store's schema against the model, through the metadata
/// table `persistence_metadata` in the store's PostgreSQL schema — the same format version, model version and
/// schema JSON the SQLite backend keeps.
///
/// Several app servers may start at once: each takes a transaction-scoped advisory lock on the store before it
/// looks, so one creates (or checks) the store while the others wait, then find it ready.
enum PostgresSchemaStore {
    static let metadataTable = "persistence_metadata"
    static let aliasTable = "persistence_aliases"
    /// A sequence stores of earlier versions drew a number from after each commit, to notice other servers' commits;
    /// commit notices (``CommitNotices``) replaced it. Stores still have it: deleting a store drops it.
    static let commitSequence = "persistence_commits"
    /// The format this code writes and reads.
    static let formatVersion: Int64 = 1

    /// Prepares the store for `tables` in one transaction on `connection`, under the store's advisory lock: creates
    /// a new store, or checks an existing one and migrates it from an older model version through `migration` —
    /// the same steps the SQLite backend runs, in the same transaction (PostgreSQL's DDL is transactional). Servers
    /// starting together wait for the lock, then find the store created or migrated: it happens once.
    ///
    /// The store's statement timeout doesn't apply here: waiting for another server's migration, or migrating a
    /// large table, may take long.
    /// - Parameter dryRun: Migrate, then roll back: the store is left as it was.
    /// - Returns: What a migration did (or would do); `nil` when none ran.
    /// - Throws: `migrationRequired` when the stored schema differs from the model and no migration can bring it
    ///   there, `migrationFailed` when one failed, `unsupportedFormatVersion`, `invalidConfiguration` for a store of
    ///   a newer model version, `invalidSchema` when tables of the model's names exist outside a Persistence store,
    ///   `corrupt` for unreadable metadata — each with nothing changed.
    @discardableResult
    static func prepare(
        _ connection: ServerConnection, schema: String, model: Model, tables: [PostgresTable],
        migration: MigrationChain, block: MigrationBlock? = nil, dryRun: Bool = false
    ) throws -> MigrationReport? {
        try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        do {
            try connection.execute("SET LOCAL statement_timeout = 0")
            try connection.run("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey(schema: schema))])
            let report = try prepareLocked(
                connection, schema: schema, model: model, tables: tables, migration: migration, block: block,
                dryRun: dryRun)
            try connection.execute(dryRun ? "ROLLBACK" : "COMMIT")
            return report
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The advisory lock key of a store: a stable 64-bit hash of its schema name.
    static func lockKey(schema: String) -> Int64 {
        PostgresDatabase.advisoryLockKey("persistence:\(schema)")
    }

    private static func prepareLocked(
        _ connection: ServerConnection, schema: String, model: Model, tables: [PostgresTable],
        migration: MigrationChain, block: MigrationBlock?, dryRun: Bool
    ) throws -> MigrationReport? {
        let descriptions = tables.map(\.layout.entity)
        guard try tableExists(connection, schema: schema, name: metadataTable) else {
            for table in tables where try tableExists(connection, schema: schema, name: table.layout.entity.name) {
                throw PersistenceError(
                    .invalidSchema,
                    "the schema '\(schema)' already has a table '\(table.layout.entity.name)' that Persistence did not"
                        + " create")
            }
            guard !dryRun else { return nil }
            try create(connection, schema: schema, version: model.version, tables: tables)
            try ensureVectorTables(connection, schema: schema, tables: tables)
            return nil
        }
        let decision = try decide(connection, schema: schema, model: model, current: descriptions)
        guard case .migrate(let storedVersion, let storedSchema) = decision else {
            try CommitNotices.ensure(connection, schema: schema, tables: notifyingTables(tables))
            try ensureVectorTables(connection, schema: schema, tables: tables)
            return nil
        }
        // Built again from the migrated records below; they refer to tables the steps may replace.
        try dropVectorTables(connection, schema: schema)
        // Every step is planned before anything changes: a step that can't be done is refused with the store as it
        // was.
        var report: MigrationReport?
        if let block {
            // The block runs instead of a plan's steps (a builder has one or the other), at every version bump.
            let run = try BlockMigrationRun(
                stored: storedSchema, current: tables.map(\.layout),
                scratch: PostgresMigrationScratch(connection: connection, schema: schema), from: storedVersion,
                to: model.version, progress: migration.progress)
            try Migration.run(block, on: run, from: storedVersion, to: model.version)
            report = try run.finish { plan in PostgresMigrationStep(connection: connection, schema: schema, plan: plan)
            }
            try write(connection, schema: schema, "schema", .blob(StoreGate.schemaJSON(descriptions)))
        } else if let plans = try migration.plans(
            stored: storedSchema, storedVersion: storedVersion, model: model, current: tables.map(\.layout))
        {
            report = try migration.run(plans, from: storedVersion, to: model.version) { plan in
                PostgresMigrationStep(connection: connection, schema: schema, plan: plan)
            }
            try write(connection, schema: schema, "schema", .blob(StoreGate.schemaJSON(descriptions)))
        }
        try write(connection, schema: schema, "modelVersion", .integer(Int64(model.version)))
        // After the migration: a table it rebuilt lost its trigger.
        try CommitNotices.ensure(connection, schema: schema, tables: notifyingTables(tables))
        try ensureVectorTables(connection, schema: schema, tables: tables)
        return report
    }

    /// The tables whose commits other servers' observers hear of: the entities' and the aliases'.
    private static func notifyingTables(_ tables: [PostgresTable]) -> [String] {
        tables.map(\.layout.entity.name) + [aliasTable]
    }

    /// Creates a store's schema, metadata, alias table and entity tables at `version`, in the transaction under way;
    /// its tables notify commits (``CommitNotices``).
    static func create(_ connection: ServerConnection, schema: String, version: Int, tables: [PostgresTable]) throws {
        let descriptions = tables.map(\.layout.entity)
        try connection.execute("CREATE SCHEMA IF NOT EXISTS \(quote(schema))")
        try connection.execute(
            "CREATE TABLE \(qualified(schema, metadataTable)) (key text NOT NULL PRIMARY KEY, value bytea NOT NULL)")
        // Aliases: one row per name and position (-1: the entity and whether it's a list; 0…: the keys, tagged).
        try connection.execute(
            "CREATE TABLE \(qualified(schema, aliasTable)) (name bytea NOT NULL, position bigint NOT NULL, "
                + "entity bytea NOT NULL, list bigint NOT NULL, key bytea, PRIMARY KEY (name, position))")
        for table in tables {
            for sql in table.creationSQL { try connection.execute(sql) }
        }
        try write(connection, schema: schema, "formatVersion", .integer(formatVersion))
        try write(connection, schema: schema, "modelVersion", .integer(Int64(version)))
        try write(connection, schema: schema, "schema", .blob(StoreGate.schemaJSON(descriptions)))
        try CommitNotices.ensure(connection, schema: schema, tables: notifyingTables(tables))
    }

    /// Drops what else of the library's the store's schema holds — tables and functions named with the reserved
    /// `persistence_` prefix that other products keep beside a store (a sync server's change log, its clients, its
    /// trigger function): a store made again in the schema must not inherit them.
    private static func dropCompanions(_ connection: ServerConnection, schema: String) throws {
        let tables = try connection.rows(
            "SELECT c.relname::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname LIKE 'persistence\\_%'",
            [.text(schema)])
        for case .text(let table)? in tables.map(\.first) {
            try connection.execute("DROP TABLE IF EXISTS \(qualified(schema, table)) CASCADE")
        }
        let functions = try connection.rows(
            "SELECT p.oid::pg_catalog.regprocedure::text FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n "
                + "ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname LIKE 'persistence\\_%'",
            [.text(schema)])
        for case .text(let function)? in functions.map(\.first) {
            // `regprocedure` text is the function's signature, schema-qualified and quoted as needed.
            try connection.execute("DROP FUNCTION IF EXISTS \(function) CASCADE")
        }
    }

    /// Drops a store's tables, sequence and (when then empty, and not `public`) schema, under its advisory lock, in
    /// one transaction; returns whether there was a store.
    static func delete(_ connection: ServerConnection, schema: String) throws -> Bool {
        try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        do {
            try connection.run("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey(schema: schema))])
            guard try tableExists(connection, schema: schema, name: metadataTable) else {
                try connection.execute("ROLLBACK")
                return false
            }
            let stored = try readMetadata(connection, schema: schema)
            var tables = [metadataTable, aliasTable]
            if case .blob(let json)? = stored["schema"],
                let descriptions = try? JSONDecoder().decode([EntityDescription].self, from: json)
            {
                tables += descriptions.map(\.name)
            }
            // First: they refer to the entities' tables.
            try dropVectorTables(connection, schema: schema)
            for table in tables {
                try connection.execute("DROP TABLE IF EXISTS \(qualified(schema, table))")
            }
            try connection.execute("DROP SEQUENCE IF EXISTS \(qualified(schema, commitSequence))")
            try CommitNotices.drop(connection, schema: schema)
            try dropCompanions(connection, schema: schema)
            let left = try connection.run(
                "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE n.nspname = $1", [.text(schema)], textAsBytes: false
            ).rows.first?.decode(Int64.self)
            if schema != "public", left == 0 {
                try connection.execute("DROP SCHEMA IF EXISTS \(quote(schema))")
            }
            try connection.execute("COMMIT")
            return true
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The schemas of the connection's database that hold a Persistence store, sorted.
    static func storeSchemas(_ connection: ServerConnection) throws -> [String] {
        try connection.run(
            "SELECT schemaname FROM pg_catalog.pg_tables WHERE tablename = $1",
            [.text(metadataTable)], textAsBytes: false
        ).rows.map { try $0.decode(String.self) }.sorted()
    }

    /// Whether `schema` has a table named `name`.
    static func tableExists(_ connection: ServerConnection, schema: String, name: String) throws -> Bool {
        try !connection.run(
            "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2",
            [.text(schema), .text(name)], textAsBytes: false
        ).rows.isEmpty
    }

    /// What opening the existing store in `schema` means for `model`, whose entities are `current` (see
    /// `StoreGate.decide`).
    static func decide(
        _ connection: ServerConnection, schema: String, model: Model, current: [EntityDescription]
    ) throws -> StoreGate.Decision {
        let stored = try readMetadata(connection, schema: schema)
        var format: Int64 = 0
        if case .integer(let value)? = stored["formatVersion"] { format = value }
        var version: Int?
        if case .integer(let value)? = stored["modelVersion"] { version = Int(exactly: value) }
        var json: Data?
        if case .blob(let value)? = stored["schema"] { json = value }
        return try StoreGate.decide(
            StoreGate.Metadata(format: format, schema: json, version: version), formats: 1...formatVersion,
            model: model, current: current)
    }

    /// The metadata, by key: integers as `.integer`, the schema as `.blob`.
    static func readMetadata(_ connection: ServerConnection, schema: String) throws -> [String: Value] {
        var stored: [String: Value] = [:]
        for row in try connection.run("SELECT key, value FROM \(qualified(schema, metadataTable))").rows {
            let values = try row.values()
            guard case .text(let key) = values[0], case .blob(let data) = values[1] else { continue }
            if key == "schema" {
                stored[key] = .blob(data)
            } else if let integer = Int64(String(decoding: data, as: UTF8.self)) {
                stored[key] = .integer(integer)
            } else {
                stored[key] = .blob(data)
            }
        }
        return stored
    }

    private static func write(_ connection: ServerConnection, schema: String, _ key: String, _ value: Value) throws {
        let bytes: Value =
            switch value {
            case .integer(let integer): .blob(Data(String(integer).utf8))
            default: value
            }
        try connection.run(
            "INSERT INTO \(qualified(schema, metadataTable)) (key, value) VALUES ($1, $2) "
                + "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [.text(key), bytes], textAsBytes: false)
    }

    /// A quoted, schema-qualified name.
    static func qualified(_ schema: String, _ name: String) -> String { quote(schema) + "." + quote(name) }
}
