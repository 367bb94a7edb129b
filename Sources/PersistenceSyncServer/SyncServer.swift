public import PersistenceCore
public import PersistencePostgres
import PersistenceSync

/// The server side of sync on a PostgreSQL store: keeps a change log of the store's records, applies clients' pushes
/// (each outbox sequence once, conflicts settled by each entity's ``ConflictPolicy``) and answers their pulls.
///
/// The store's model is the clients' model without the journal (`Model.synced()` adds that on the
/// clients only). Opening the sync server puts a row trigger on each table, which logs every write — the library's
/// and any other program's — so that pulls see it.
///
/// ```swift
/// let store = try PostgresBuilder(url: url, model: AppModel.current).create()
/// let server = try SyncServer(database: store, model: AppModel.current, policies: ["Note": .newestStamp])
/// // From async code, off the cooperative pool: `try await builder.open()`, `try await SyncServer.open(…)`.
/// let client = try SyncClient(database: local, model: AppModel.current.synced(), transport: server.directTransport)
/// ```
public final class SyncServer: Sendable {
    /// The store.
    public let database: PostgresDatabase
    let entities: SyncedEntities
    /// Every synced entity's conflict policy, by entity name.
    let policies: [String: ConflictPolicy]
    let scopes: [String: SyncScopeDefinition]
    /// The store's model version: clients sync with the same one.
    let modelVersion: Int
    /// How long a push retries when it collides with concurrent writes.
    let collisionRetries: RetryPolicy
    /// The advisory lock pushes to this store take turns on (see `SyncServer.push(_:access:)`).
    let pushLockKey: Int64

    /// A sync server for `database`, a store of `model`.
    /// - Parameters:
    ///   - database: The store.
    ///   - model: The store's model.
    ///   - policies: The conflict policy of each entity, by entity name; an entity not named here has
    ///     ``ConflictPolicy/newestStamp`` when it has a stamp attribute, else ``ConflictPolicy/serverWins``.
    ///   - scopes: The scopes clients may subscribe to (partial sync).
    /// - Throws: `unknownEntity` for a policy or scope of an entity the model lacks,
    ///   `invalidConfiguration` for ``ConflictPolicy/newestStamp`` on an entity without a
    ///   stamp or two scopes of one name; what the server reports while it sets up the change log.
    ///
    /// Blocks the calling thread while it sets up the change log on the server.
    public init(
        database: PostgresDatabase, model: Model, policies: [String: ConflictPolicy] = [:],
        scopes: [SyncScopeDefinition] = []
    ) throws {
        guard SyncJournalNames.all.isDisjoint(with: model.entities.map { $0.entityName }) else {
            throw PersistenceError(
                .invalidConfiguration, "the server's model is the clients' without the journal (`synced()`)")
        }
        self.database = database
        entities = try SyncedEntities(model: model)
        for (name, policy) in policies {
            let entry = try entities.entry(name)
            if case .newestStamp = policy.rule, entry.layout.stampIndex == nil {
                throw PersistenceError(
                    .invalidConfiguration, "entity '\(name)' has no stamp attribute: its newest stamp can't win")
            }
        }
        // Each entity's policy, defaults filled in once.
        self.policies = entities.all.reduce(into: [:]) { resolved, entry in
            let name = entry.layout.entity.name
            resolved[name] = policies[name] ?? (entry.layout.stampIndex == nil ? .serverWins : .newestStamp)
        }
        var definitions: [String: SyncScopeDefinition] = [:]
        for scope in scopes {
            _ = try entities.entry(scope.entity)
            guard definitions.updateValue(scope, forKey: scope.name) == nil else {
                throw PersistenceError(.invalidConfiguration, "two sync scopes are named '\(scope.name)'")
            }
        }
        self.scopes = definitions
        modelVersion = model.version
        collisionRetries = RetryPolicy.collisions(for: .seconds(30))
        pushLockKey = PostgresDatabase.advisoryLockKey("persistence-sync-push:\(database.schema)")
        try installLog()
    }

    /// A sync server for `database` as ``init(database:model:policies:scopes:)`` makes one, set up on a thread off the
    /// cooperative pool: the way to start one from async code (a server's `main`, a request handler).
    ///
    /// ```swift
    /// let store = try await PostgresBuilder(url: url, model: AppModel.current).open()
    /// let server = try await SyncServer.open(database: store, model: AppModel.current)
    /// ```
    /// - Throws: What ``init(database:model:policies:scopes:)`` throws; `CancellationError` when the task is cancelled
    ///   before the setup starts.
    public static func open(
        database: PostgresDatabase, model: Model, policies: [String: ConflictPolicy] = [:],
        scopes: [SyncScopeDefinition] = []
    ) async throws -> SyncServer {
        try await CancellationFlag.runOffPool {
            try SyncServer(database: database, model: model, policies: policies, scopes: scopes)
        }
    }

    /// Creates the change log, the clients' table and each table's trigger, under the store's advisory lock so that
    /// servers opening together don't race; logs the existing records of tables that had no trigger yet.
    private func installLog() throws {
        let schema = database.schema
        let layouts = entities.all.map(\.layout)
        try database.write(retrying: collisionRetries) { context in
            _ = try context.internalRows("SELECT pg_catalog.pg_advisory_xact_lock($1)", [.integer(Self.lockKey)])
            for statement in SyncLog.setup(schema: schema) { _ = try context.internalRows(statement) }
            let existing = Set(
                try context.internalRows(
                    """
                    SELECT c.relname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
                    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND t.tgname = $2
                    """, [.text(schema), .text(SyncLog.trigger)]
                ).compactMap { row -> String? in
                    if case .text(let name) = row.values.first { return name }
                    return nil
                })
            for layout in layouts {
                for statement in SyncLog.attach(
                    schema: schema, layout: layout, exists: existing.contains(layout.entity.name))
                {
                    _ = try context.internalRows(statement)
                }
            }
        }
    }

    /// Refuses a client whose model isn't the server's.
    /// - Throws: `updateRequired` for an older client; `invalidConfiguration`
    ///   for a newer one (deploy the server's migration first).
    func checkModelVersion(_ clientVersion: Int) throws {
        if clientVersion < modelVersion {
            throw PersistenceError(
                .updateRequired,
                "the client's model is version \(clientVersion), the server's \(modelVersion): update the app to sync")
        }
        if clientVersion > modelVersion {
            throw PersistenceError(
                .invalidConfiguration,
                "the client's model is version \(clientVersion), newer than the server's \(modelVersion): migrate the"
                    + " server first")
        }
    }

    /// The advisory lock key the log's setup takes (apart from the migration lock's, which is per schema).
    private static let lockKey: Int64 = 0x7379_6e63_6c6f_6700  // "synclog"
}
