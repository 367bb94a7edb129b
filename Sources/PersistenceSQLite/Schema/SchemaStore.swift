import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL

/// Creates a new store's tables and checks an existing store's schema against the model, through the metadata
/// table `persistence_metadata` (format version, model version, schema as JSON).
enum SchemaStore {
    static let metadataTable = "persistence_metadata"
    /// The on-disk format this code writes and reads.
    static let formatVersion: Int64 = 1

    /// Prepares the store for `mappings` in one write transaction on `connection`: creates a new store, or checks
    /// an existing one and migrates it from an older model version (see ``SQLiteMigration``).
    ///
    /// - Parameter dryRun: Migrate, then roll back: the store is left as it was.
    /// - Returns: What a migration did (or would do); `nil` when none ran.
    /// - Throws: `PersistenceError/Code/migrationRequired` when the stored schema differs from the model and no
    ///   migration can bring it there, `PersistenceError/Code/migrationFailed` when one failed,
    ///   `PersistenceError/Code/unsupportedFormatVersion` for a newer format, `PersistenceError/Code/corrupt`
    ///   for a file that is not SQLite — each with nothing changed.
    @discardableResult
    static func prepare(
        _ connection: Connection, model: Model, mappings: [TableMapping], migration: SQLiteMigration,
        dryRun: Bool = false
    ) throws -> MigrationReport? {
        let descriptions = mappings.map(\.layout.entity)
        // A few passes at most: each looks at the store read-only, plans a migration and backs the store up when a
        // step needs it, then opens the write transaction — and looks again when another process changed the store
        // in between.
        for _ in 0..<3 {
            let seen: StoreGate.Metadata?
            // The version a migration starts from, and its planned steps (`nil` when only the version changes).
            var migrateFrom: Int?
            var stored: [EntityDescription] = []
            var plans: [MigrationStepPlan]?
            do {
                seen = try readMetadata(connection)
                if let seen,
                    case .migrate(let version, let storedSchema) = try StoreGate.decide(
                        seen, formats: 1...formatVersion, model: model, current: descriptions)
                {
                    migrateFrom = version
                    stored = storedSchema
                    // A migration block runs instead of the plan's steps (the builder has one or the other).
                    plans =
                        migration.block != nil
                        ? nil
                        : try migration.plans(
                            stored: storedSchema, storedVersion: version, model: model,
                            current: mappings.map(\.layout))
                    if !dryRun { try migration.backUpIfNeeded(connection, plans: plans, from: version) }
                }
            } catch {
                migration.discardBackup()
                throw error
            }
            try connection.execute("BEGIN IMMEDIATE")
            do {
                guard try readMetadata(connection) == seen else {
                    try connection.execute("ROLLBACK")
                    continue
                }
                let report = try prepareInTransaction(
                    connection, exists: seen != nil, migrateFrom: migrateFrom, stored: stored, plans: plans,
                    model: model, mappings: mappings, migration: migration, dryRun: dryRun)
                try connection.execute(dryRun ? "ROLLBACK" : "COMMIT")
                return report
            } catch {
                if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
                migration.discardBackup()
                throw error
            }
        }
        migration.discardBackup()
        throw PersistenceError(.busy, "the store kept changing while it was prepared for opening")
    }

    /// What the store's metadata holds, in one snapshot; `nil` when it has no metadata table.
    static func readMetadata(_ connection: Connection) throws -> StoreGate.Metadata? {
        let inTransaction = !connection.isAutocommit
        if !inTransaction { try connection.execute("BEGIN DEFERRED") }
        defer { if !inTransaction { try? connection.execute("COMMIT") } }
        let hasMetadata =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(metadataTable)])
            != .integer(0)
        guard hasMetadata else { return nil }
        var metadata = StoreGate.Metadata(format: 0, schema: nil, version: nil)
        if case .integer(let value)? = try read(connection, "formatVersion") { metadata.format = value }
        if case .integer(let value)? = try read(connection, "modelVersion") { metadata.version = Int(exactly: value) }
        if case .blob(let json)? = try read(connection, "schema") { metadata.schema = json }
        return metadata
    }

    /// Creates the store when it doesn't `exist`, or migrates it from `migrateFrom` with the steps planned for it, as
    /// the look before the transaction decided (the transaction found the metadata unchanged since).
    private static func prepareInTransaction(
        _ connection: Connection, exists: Bool, migrateFrom: Int?, stored: [EntityDescription],
        plans: [MigrationStepPlan]?, model: Model, mappings: [TableMapping], migration: SQLiteMigration, dryRun: Bool
    ) throws -> MigrationReport? {
        let descriptions = mappings.map(\.layout.entity)
        guard exists else {
            let tables = try connection.scalar(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            guard tables == .integer(0) else {
                throw PersistenceError(
                    .invalidSchema, "the database file holds tables that Persistence did not create")
            }
            guard !dryRun else { return nil }
            try create(connection, model: model, mappings: mappings, descriptions: descriptions)
            return nil
        }
        guard let storedVersion = migrateFrom else { return nil }
        var report: MigrationReport?
        if let block = migration.block {
            report = try migration.runBlock(
                block, stored: stored, on: connection, from: storedVersion, model: model,
                current: mappings.map(\.layout))
            try write(connection, "schema", .blob(StoreGate.schemaJSON(descriptions)))
        } else if let plans {
            report = try migration.run(plans, on: connection, from: storedVersion, model: model)
            try write(connection, "schema", .blob(StoreGate.schemaJSON(descriptions)))
        }
        try write(connection, "modelVersion", .integer(Int64(model.version)))
        return report
    }

    private static func create(
        _ connection: Connection, model: Model, mappings: [TableMapping], descriptions: [EntityDescription]
    ) throws {
        try connection.execute("CREATE TABLE \(quote(metadataTable)) (key TEXT NOT NULL PRIMARY KEY, value)")
        for mapping in mappings {
            for sql in mapping.creationSQL { try connection.execute(sql) }
        }
        try write(connection, "formatVersion", .integer(formatVersion))
        try write(connection, "modelVersion", .integer(Int64(model.version)))
        try write(connection, "schema", .blob(StoreGate.schemaJSON(descriptions)))
    }

    private static func read(_ connection: Connection, _ key: String) throws -> Value? {
        try connection.scalar("SELECT value FROM \(quote(metadataTable)) WHERE key = ?", [.text(key)])
    }

    static func write(_ connection: Connection, _ key: String, _ value: Value) throws {
        let statement = try connection.statement(
            sql: "INSERT INTO \(quote(metadataTable)) (key, value) VALUES (?, ?) "
                + "ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        try statement.bind([.text(key), value])
        try statement.run()
    }
}
