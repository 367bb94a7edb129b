@_spi(PersistenceBackend) package import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
import PostgresNIO

/// A PostgreSQL store opened read-only through the schema it holds (see ``StoredStore``): one connection in one
/// `REPEATABLE READ READ ONLY` transaction from open to close, so every entity is read from one snapshot, and the
/// server refuses any write.
///
/// Records stream through the storage's cursor in primary-key order (`ORDER BY` the key: integers numerically, text
/// and UUIDs as their bytes — the order of ``Value/compare(_:_:)``), a batch at a time.
package final class PostgresStoredStore: StoredStore {
    package let backend = "postgres"
    package let schemaVersion: Int
    package let layouts: [RecordLayout]
    private let connection: ServerConnection
    private let schema: String
    private let place: String
    /// Each entity's table, in ``layouts``' order.
    private let tables: [PostgresTable]
    /// The records, read through the storage an app's context uses, on the session's connection.
    private let storage: PostgresStorage
    private let format: Int64
    private var isOpen = true

    /// Opens the store in `schema` of the database `url` names.
    /// - Parameters:
    ///   - url: A `postgres://user@host:port/database` URL (its `sslmode` is honoured).
    ///   - password: The user's password, when the server asks for one.
    /// - Throws: ``PersistenceError`` — `notFound` when the schema holds no store, the connection errors of
    ///   ``PostgresBuilder``, `unsupportedFormatVersion` for a newer format, `corrupt` for unreadable metadata.
    package init(url: String, password: String?, schema: String) throws {
        var builder = try PostgresBuilder(url: url, model: Model(entities: []))
        if let password { builder.password = password }
        builder.schema = schema
        self.schema = schema
        place = "\(builder.host):\(builder.port)/\(builder.database) schema \(schema)"
        connection = try ServerConnection.open(builder)
        do {
            try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            guard
                try PostgresSchemaStore.tableExists(
                    connection, schema: schema, name: PostgresSchemaStore.metadataTable)
            else { throw PersistenceError(.notFound, "no Persistence store at \(place)") }
            let stored = try PostgresSchemaStore.readMetadata(connection, schema: schema)
            guard case .integer(let format)? = stored["formatVersion"],
                (1...PostgresSchemaStore.formatVersion).contains(format)
            else {
                throw PersistenceError(
                    .unsupportedFormatVersion,
                    "the store at \(place) has a format this build doesn't read (1…\(PostgresSchemaStore.formatVersion))"
                )
            }
            guard case .integer(let version)? = stored["modelVersion"], let schemaVersion = Int(exactly: version),
                case .blob(let json)? = stored["schema"]
            else { throw PersistenceError(.corrupt, "the store at \(place) has no stored schema or version") }
            self.format = format
            self.schemaVersion = schemaVersion
            layouts = try StoreGate.storedLayouts(json)
            tables = layouts.enumerated().map { PostgresTable(index: $0, layout: $1, schema: schema) }
        } catch {
            connection.close()
            throw error
        }
        storage = PostgresStorage(
            connection: connection, tables: EntityLookup(unrelated: layouts, storage: tables), schema: schema,
            instrumentation: .off)
    }

    deinit { connection.close() }

    package var details: [(label: String, value: String)] {
        get throws {
            try checkOpen()
            var details: [(label: String, value: String)] = [
                ("server", place), ("format", "Persistence PostgreSQL format \(format)"),
            ]
            let size = try connection.rows(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_catalog.pg_class c "
                    + "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'",
                [.text(schema)])
            if case .integer(let bytes)? = size.first?.first {
                details.append(("size", StoredStoreSize.bytes(bytes)))
            }
            if case .text(let version)? = try connection.rows("SHOW server_version").first?.first {
                details.append(("server version", version))
            }
            details.append(("encryption", "none at rest by Persistence (the server's and the connection's TLS)"))
            return details
        }
    }

    package func storage(for position: Int) throws -> (storage: any RecordStorage, entity: Int)? {
        try checkOpen()
        return (storage, position)
    }

    package func verify() throws -> VerificationReport {
        try checkOpen()
        var verifier = PostgresVerifier(
            connection: connection, schema: schema, tables: tables
        ) { [self] report in try verifyReferencesAndFullTextIndexes(into: &report) }
        return try verifier.run()
    }

    package func close() throws {
        guard isOpen else { return }
        isOpen = false
        _ = try? connection.execute("COMMIT")
        connection.close()
    }

    private func checkOpen() throws {
        guard isOpen else { throw PersistenceError(.closed, "the store at \(place) is closed") }
    }
}

/// A new PostgreSQL store filled with records (see ``StoredStoreWriter``): the schema, tables and every record are
/// made in one transaction, under the store's advisory lock — PostgreSQL's DDL is transactional, so until
/// ``commit()`` nothing of the store exists for anyone else, and ``discard()`` (or a dropped connection) leaves
/// nothing.
package final class PostgresStoredStoreWriter: StoredStoreWriter {
    private let connection: ServerConnection
    private let place: String
    private let tables: [String: PostgresTable]
    private var finished = false

    /// Starts a store in `schema` of the database `url` names, holding `layouts`' entities at `schemaVersion`.
    /// - Throws: ``PersistenceError`` — `invalidArgument` when the schema holds a store or any table already, the
    ///   connection errors of ``PostgresBuilder``.
    package init(url: String, password: String?, schema: String, layouts: [RecordLayout], schemaVersion: Int) throws {
        var builder = try PostgresBuilder(url: url, model: Model(entities: []))
        if let password { builder.password = password }
        builder.schema = schema
        place = "\(builder.host):\(builder.port)/\(builder.database) schema \(schema)"
        connection = try ServerConnection.open(builder)
        let tables = layouts.enumerated().map { PostgresTable(index: $0.offset, layout: $0.element, schema: schema) }
        do {
            try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            try connection.run(
                "SELECT pg_advisory_xact_lock($1)", [.integer(PostgresSchemaStore.lockKey(schema: schema))])
            let existing = try connection.rows(
                "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1", [.text(schema)])
            guard case .integer(0)? = existing.first?.first else {
                throw PersistenceError(
                    .invalidArgument, "the schema \(schema) at \(place) has tables: a new store goes to an empty schema"
                )
            }
            try PostgresSchemaStore.create(connection, schema: schema, version: schemaVersion, tables: tables)
        } catch {
            _ = try? connection.execute("ROLLBACK")
            connection.close()
            throw error
        }
        self.tables = Dictionary(tables.map { ($0.layout.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    deinit { discard() }

    package func insert(_ record: Record) throws {
        guard !finished else { throw PersistenceError(.closed, "the new store at \(place) is finished") }
        guard let table = tables[record.layout.entity.name] else {
            throw PersistenceError(.unknownEntity, "the new store has no entity '\(record.layout.entity.name)'")
        }
        let values = try table.layout.storedValues(of: record)
        // ON CONFLICT DO NOTHING: a refused record leaves the transaction usable, and says which constraint.
        guard try connection.runPrepared(table.insertSQL, values).isEmpty else { return }
        if try !connection.run(table.existsSQL, [record.primaryKey]).rows.isEmpty {
            throw PersistenceError(.duplicateKey, "a '\(record.layout.entity.name)' record has this key already")
        }
        throw PersistenceError(
            .uniqueViolation, "a '\(record.layout.entity.name)' record has a unique value another one has already")
    }

    package func commit() throws {
        guard !finished else { throw PersistenceError(.closed, "the new store at \(place) is already finished") }
        finished = true
        defer { connection.close() }
        do {
            try connection.execute("COMMIT")
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    package func discard() {
        guard !finished else { return }
        finished = true
        _ = try? connection.execute("ROLLBACK")
        connection.close()
    }
}
