public import CoreMetrics
import Foundation
public import Logging
// Apps import one module: the backend brings the core's protocols and types with it.
@_exported public import PersistenceCore
@_spi(PersistenceBackend) public import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQL
public import Tracing

/// Builds a ``PostgresDatabase``: validates the configuration, then connects and opens or creates the store.
///
/// ```swift
/// let db = try PostgresBuilder(url: "postgres://app@db.internal/shop", model: model).create()
/// ```
///
/// The store is a PostgreSQL schema on the server (``schema``, `public` by default): one table per entity, plus
/// `persistence_metadata`, `persistence_aliases`, the commit notices' trigger function `persistence_notify` and the
/// listeners' lease (the sequence `persistence_listening`, renewed through `persistence_renew_lease()`). Several
/// databases — several processes, several app servers — may open the same store at once.
public struct PostgresBuilder: MigratingDatabaseBuilder {
    /// Whether the connection uses TLS.
    public enum TLSMode: String, Sendable {
        /// Plain TCP (a loopback or a private network).
        case disable
        /// TLS when the server offers it, plain otherwise.
        case prefer
        /// TLS or no connection.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password; never logged or put in an error.
    public var password: String?
    /// The database on the server.
    public var database: String
    /// The entity types and the schema version.
    public var model: Model
    /// How many write transactions of the database run at once, and how many read transactions (2…256): each runs
    /// on a connection of its own, opened as transactions need them and kept for the next, so a database holds at
    /// most twice this many connections, plus one that listens for other servers' commits. A server handling `n`
    /// requests at once wants `n` here (the server's `max_connections` must allow every app server's share).
    public var poolSize = 4
    /// TLS: `.disable` by default, as for a server on loopback.
    public var tls = TLSMode.disable
    /// How long connecting may take before `unreachable`.
    public var connectTimeout: Duration = .seconds(10)
    /// How long one statement may run on the server (`statement_timeout`); `nil` for the server's setting.
    public var statementTimeout: Duration?
    /// The PostgreSQL schema that holds the tables (`public` by default).
    public var schema = "public"
    /// Where the database logs, through swift-log; `nil` (the default) logs nothing. Operations and transactions
    /// are logged at `.trace`; no stored value or password is ever logged.
    public var logger: Logger?
    /// Where the database records metrics, through swift-metrics; `nil` (the default) records none.
    public var metricsFactory: (any MetricsFactory)?
    /// Where the database's spans go, through swift-distributed-tracing — pass `InstrumentationSystem.tracer` for the
    /// bootstrapped tracer; `nil` (the default) makes none. A span per transaction (`persistence.read`,
    /// `persistence.write`) and one for opening the store (`persistence.open`, with a migration's versions when one
    /// ran), each a child of the caller's span; no stored value or key is ever in one.
    public var tracer: (any Tracer)?
    /// The model versions the app has shipped and the mapping models between them: ``create()`` migrates a store
    /// written with an older version, step by step, exactly as the SQLite backend does (see ``MigrationPlan``).
    /// `nil` (the default) still infers a migration between the store's version and the model's, and throws
    /// `PersistenceError/Code/migrationRequired` when the change can't be inferred.
    ///
    /// The whole chain runs in the one transaction that opens the store, under the store's advisory lock: app
    /// servers starting together migrate once — the others wait, then open the migrated store — and a failed
    /// migration leaves the store as it was. There is no backup copy as on SQLite: PostgreSQL's DDL is
    /// transactional, and backups of a server are the server's (`pg_dump`, replicas).
    public var migrationPlan: MigrationPlan?
    /// Brings a store written with an older model version up to ``model`` at ``create()`` with code, Realm's way:
    /// called once with the store's version (see `Migration`), inside the advisory-locked transaction that opens the
    /// store. The same block gives the same records here as on SQLite and LMDB: what the schema difference can do
    /// alone is done around it. Give a block or a ``migrationPlan``, not both.
    public var migrationBlock: MigrationBlock?
    /// Called on the opening thread as a migration goes through each step's entities (see ``MigrationProgress``).
    public var migrationProgress: MigrationProgressHandler?

    /// A builder from the connection settings, one by one.
    public init(
        host: String, port: Int = 5432, username: String, password: String?, database: String, model: Model
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.model = model
    }

    /// A builder from one `postgres://user:password@host:port/database?sslmode=require` URL.
    /// - Throws: `invalidConfiguration` naming what is wrong (never the password).
    public init(url: String, model: Model) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            ["postgres", "postgresql"].contains(scheme.lowercased())
        else {
            throw PersistenceError(.invalidConfiguration, "the URL is not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the URL names no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the URL names no user")
        }
        let database = String(components.path.drop { $0 == "/" })
        self.init(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? user : database, model: model)
        for item in components.queryItems ?? [] where item.name == "sslmode" {
            switch item.value {
            case "disable": tls = .disable
            case "prefer", "allow": tls = .prefer
            case "require", "verify-ca", "verify-full": tls = .require
            default: throw PersistenceError(.invalidConfiguration, "the URL's sslmode is not one PostgreSQL knows")
            }
        }
    }

    /// Validates the configuration, then connects and opens (creating when needed) the store.
    ///
    /// Nothing is sent to the server until every check has passed (the ``migrationPlan`` included). Several
    /// processes opening one store at once take turns under an advisory lock: one creates the tables — or migrates
    /// a store of an older model version (see ``migrationPlan``) — and the others find them ready.
    /// - Throws: ``PersistenceError`` — `invalidConfiguration`, `invalidSchema` (an identifier PostgreSQL would
    ///   truncate), `unreachable`, `invalidCredentials`, `databaseNotFound`, `tlsFailure`, `migrationRequired`,
    ///   `migrationFailed` (the store left as it was), …
    public func create() throws -> PostgresDatabase {
        try validate()
        let tables = try EntityLookup.tables(of: model, in: schema)
        // Held from before the store is touched, so it can't be deleted while it opens.
        let registration = StoreFiles.register(key: storeKey)
        let migration = try MigrationChain(plan: migrationPlan, model: model, progress: migrationProgress)
        let instrumentation = Instrumentation(
            logger: logger, metricsFactory: metricsFactory, tracer: tracer, backend: "postgres",
            system: .init(name: "postgresql", isServer: true), store: schema)
        return try instrumentation.opening {
            // The database's id in the store's commit notices: its listener ignores its own commits.
            let origin = UUID().uuidString
            let connection = try ServerConnection.open(self, origin: origin)
            let report: MigrationReport?
            do {
                report = try PostgresSchemaStore.prepare(
                    connection, schema: schema, model: model, tables: tables.all, migration: migration,
                    block: migrationBlock)
            } catch {
                connection.close()
                throw error
            }
            if let report {
                instrumentation.migrated(
                    from: report.fromVersion, to: report.toVersion, steps: report.steps.count,
                    summary: report.description)
            }
            let database = PostgresDatabase(
                builder: self, writer: connection, origin: origin, tables: tables, registration: registration,
                instrumentation: instrumentation, migrationReport: report)
            return try database.buildingFullTextIndexes(schemaVersion: model.version, model: model)
        }
    }

    /// Runs the migration ``create()`` would run on the store — every step, mapping code included, with its side
    /// effects — and rolls it back: the store is left as it was. Use it before shipping a new model version, on a
    /// copy of real data, to learn whether each step succeeds, whether it is inferred or mapped, and the records of
    /// each entity. It holds the store's advisory lock while it runs, as a migration would.
    ///
    /// - Returns: What the migration would do, step by step; `nil` when there is no store, or it needs no
    ///   migration.
    /// - Throws: What ``create()`` would throw, except that nothing is created or changed.
    public func dryRunMigration() throws -> MigrationReport? {
        try validate()
        let tables = try EntityLookup.tables(of: model, in: schema)
        let migration = try MigrationChain(plan: migrationPlan, model: model, progress: migrationProgress)
        let connection = try ServerConnection.open(self)
        defer { connection.close() }
        return try PostgresSchemaStore.prepare(
            connection, schema: schema, model: model, tables: tables.all, migration: migration, block: migrationBlock,
            dryRun: true)
    }

    /// Deletes this builder's store on the server: its entity tables (as its stored schema lists them), its metadata,
    /// aliases and commit sequence, and the schema itself when nothing else is left in it (never `public`). Refused
    /// with `storeInUse` while a database of this process has it open; other processes and servers can't be seen:
    /// stop them first.
    /// - Returns: Whether there was a store to delete.
    @discardableResult
    public func deleteStore() throws -> Bool {
        try validate()
        var deleted = false
        try StoreFiles.whileClosed(key: storeKey, name: schema) {
            let connection = try ServerConnection.open(self)
            defer { connection.close() }
            deleted = try PostgresSchemaStore.delete(connection, schema: schema)
        }
        return deleted
    }

    /// The schemas of this builder's database that hold a Persistence store, sorted.
    public func storeNames() throws -> [String] {
        try validate()
        let connection = try ServerConnection.open(self)
        defer { connection.close() }
        return try PostgresSchemaStore.storeSchemas(connection)
    }

    /// Whether the database holds a Persistence store in this builder's ``schema``.
    /// - Throws: What connecting throws (`unreachable`, `invalidCredentials`, …) and `invalidConfiguration`.
    public func storeExists() throws -> Bool {
        try storeNames().contains(schema)
    }

    /// The schema versions of the migration ``create()`` would run — the stored version, and the model's — without
    /// running it; `nil` when there is no store or it is at the model's version and schema.
    /// - Throws: What ``create()`` would throw before migrating: `migrationRequired` for a changed schema at the same
    ///   version, `invalidConfiguration` for a store of a newer version, connection errors.
    public func pendingMigration() throws -> ClosedRange<Int>? {
        try validate()
        let tables = try EntityLookup.tables(of: model, in: schema)
        let connection = try ServerConnection.open(self)
        defer { connection.close() }
        guard try PostgresSchemaStore.storeSchemas(connection).contains(schema) else { return nil }
        let decision = try PostgresSchemaStore.decide(
            connection, schema: schema, model: model, current: tables.all.map(\.layout.entity))
        guard case .migrate(let version, _) = decision else { return nil }
        return version...model.version
    }

    /// How this process's registry of open stores names this builder's store.
    var storeKey: String { "postgres://\(host.lowercased()):\(port)/\(database)/\(schema)" }

    /// `host:port`, for messages.
    var place: String { "\(host):\(port)" }

    /// Checks every setting before anything connects.
    func validate() throws {
        guard migrationPlan == nil || migrationBlock == nil else {
            throw PersistenceError(
                .invalidConfiguration,
                "the builder has both a migrationPlan and a migrationBlock; a store's history is described one way: "
                    + "give the plan's steps mapping models, or the block every version's code")
        }
        guard !host.isEmpty else { throw PersistenceError(.invalidConfiguration, "the host is empty") }
        guard (1...65_535).contains(port) else {
            throw PersistenceError(.invalidConfiguration, "the port must be between 1 and 65535")
        }
        guard !username.isEmpty else { throw PersistenceError(.invalidConfiguration, "the user name is empty") }
        guard !database.isEmpty else { throw PersistenceError(.invalidConfiguration, "the database name is empty") }
        guard (2...256).contains(poolSize) else {
            throw PersistenceError(.invalidConfiguration, "poolSize must be between 2 and 256")
        }
        guard connectTimeout > .zero else {
            throw PersistenceError(.invalidConfiguration, "connectTimeout must be positive")
        }
        if let statementTimeout, statementTimeout <= .zero {
            throw PersistenceError(.invalidConfiguration, "statementTimeout must be positive")
        }
        guard !schema.isEmpty, schema.utf8.count <= 63, !schema.unicodeScalars.contains(where: { $0 == "\0" }) else {
            throw PersistenceError(.invalidConfiguration, "the schema name must be 1 to 63 bytes without NUL")
        }
        guard !schema.lowercased().hasPrefix("pg_"), schema != "information_schema" else {
            throw PersistenceError(.invalidConfiguration, "the schema name '\(schema)' is reserved by PostgreSQL")
        }
        guard !model.entities.isEmpty else {
            throw PersistenceError(.invalidConfiguration, "the model has no entities")
        }
        try PostgresTable.validateIdentifiers(of: model)
    }
}

extension PersistenceError.Code {
    /// The server refused the user name or password.
    public static let invalidCredentials = Self(rawValue: "invalidCredentials")
    /// The server has no database of that name.
    public static let databaseNotFound = Self(rawValue: "databaseNotFound")
    /// TLS was required and could not be set up.
    public static let tlsFailure = Self(rawValue: "tlsFailure")
}
