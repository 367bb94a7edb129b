import Foundation
import PersistenceCore
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
        // At most a few passes: a store that needs a backup is copied between two (see SQLiteMigration.BackupFirst).
        for _ in 0..<3 {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                let report = try prepareInTransaction(
                    connection, model: model, mappings: mappings, migration: migration, dryRun: dryRun)
                if dryRun {
                    try connection.execute("ROLLBACK")
                } else {
                    try connection.execute("COMMIT")
                }
                return report
            } catch let backup as SQLiteMigration.BackupFirst {
                // Nothing was changed, and no migration code ran.
                try? connection.execute("ROLLBACK")
                do {
                    try migration.makeBackup(connection, to: backup.file)
                } catch {
                    migration.discardBackup()
                    throw error
                }
            } catch {
                if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
                migration.discardBackup()
                throw error
            }
        }
        migration.discardBackup()
        throw PersistenceError(.busy, "the store kept changing while it was backed up for a migration")
    }

    private static func prepareInTransaction(
        _ connection: Connection, model: Model, mappings: [TableMapping], migration: SQLiteMigration, dryRun: Bool
    ) throws -> MigrationReport? {
        let descriptions = mappings.map(\.layout.entity)
        let hasMetadata =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", [.text(metadataTable)])
            != .integer(0)
        guard hasMetadata else {
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
        let format: Int64
        switch try read(connection, "formatVersion") {
        case .integer(let value)?: format = value
        default: format = 0
        }
        let version: Int?
        switch try read(connection, "modelVersion") {
        case .integer(let value)?: version = Int(exactly: value)
        default: version = nil
        }
        var schema: Data?
        if case .blob(let json)? = try read(connection, "schema") { schema = json }
        let decision = try StoreGate.decide(
            StoreGate.Metadata(format: format, schema: schema, version: version), formats: 1...formatVersion,
            model: model, current: descriptions)
        guard case .migrate(let storedVersion, let stored) = decision else { return nil }
        let report = try migration.run(
            on: connection, stored: stored, storedVersion: storedVersion, model: model,
            current: mappings.map(\.layout), dryRun: dryRun)
        if report != nil {
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

    private static func write(_ connection: Connection, _ key: String, _ value: Value) throws {
        let statement = try connection.statement(
            sql: "INSERT INTO \(quote(metadataTable)) (key, value) VALUES (?, ?) "
                + "ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        try statement.bind([.text(key), value])
        try statement.run()
    }
}
