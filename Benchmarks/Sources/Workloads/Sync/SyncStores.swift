import Foundation
import Hummingbird
import Logging
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncHTTP
import PersistenceSyncHummingbird
import PersistenceSyncServer

/// What the sync workloads (Y1–Y3) share: the server's store of `Person` in schema ``schema`` with a `SyncServer` on
/// it, the clients' embedded stores, and the HTTP endpoint.
enum SyncStores {
    /// The schema of the sync server's store (dropped and created again by every setup).
    static let schema = "bench_sync"
    static let serverModel = Model(version: 1, entities: [Person.self])
    static let clientModel = serverModel.synced()
    static let passphrase = "correct horse battery staple"

    /// A new server store holding `people` (written in transactions of 10,000, before the sync server exists: it logs
    /// existing records when it first opens, as for a store that adopts sync) and a sync server on it.
    static func server(_ server: PostgresServer, people: some Sequence<Person>, poolSize: Int? = nil) throws
        -> SyncServer
    {
        var builder = try server.builder(schema: schema)
        builder.model = serverModel
        if let poolSize { builder.poolSize = poolSize }
        try builder.deleteStore()
        let db = try builder.create()
        do {
            var chunk: [Person] = []
            chunk.reserveCapacity(10_000)
            for person in people {
                chunk.append(person)
                guard chunk.count == 10_000 else { continue }
                try db.write { [chunk] context in try context.create(chunk) }
                chunk.removeAll(keepingCapacity: true)
            }
            if !chunk.isEmpty { try db.write { [chunk] context in try context.create(chunk) } }
            return try SyncServer(database: db, model: serverModel)
        } catch {
            try? db.close()
            throw error
        }
    }

    /// Another sync server on the store ``server(_:people:poolSize:)`` made: its own database and connections, as a
    /// second server process has.
    static func secondServer(_ server: PostgresServer, poolSize: Int) throws -> SyncServer {
        var builder = try server.builder(schema: schema)
        builder.model = serverModel
        builder.poolSize = poolSize
        let db = try builder.create()
        do {
            return try SyncServer(database: db, model: serverModel)
        } catch {
            try? db.close()
            throw error
        }
    }

    /// Every `Person` of the server's store.
    static func people(on server: SyncServer) throws -> Checksum {
        try server.database.read { context in Checksum(try context.recover(Person.self, query: Query())) }
    }
}

/// The embedded stores a sync client keeps, opened as the other workloads open them (SQLite with the builder's
/// defaults, LMDB with raw's 4 GiB map; encrypted with a passphrase and the default key derivation, which runs when
/// the store opens, before any timing).
public enum SyncClientStore: String, CaseIterable, Sendable {
    case sqlite = "sqlite"
    case lmdb = "lmdb"
    case lmdbEncrypted = "lmdb-encrypted"

    /// A client of a new store named `name` in `directory`, syncing through `transport`.
    func client(named name: String, in directory: URL, transport: some SyncTransport) throws -> any SyncBenchClient {
        switch self {
        case .sqlite:
            var builder = SQLiteBuilder(databaseName: name, model: SyncStores.clientModel)
            builder.directory = directory
            return try BenchClient(builder.create(), transport: transport)
        case .lmdb, .lmdbEncrypted:
            var builder =
                self == .lmdb
                ? LMDBBuilder.unencrypted(databaseName: name, model: SyncStores.clientModel)
                : LMDBBuilder(databaseName: name, passphrase: SyncStores.passphrase, model: SyncStores.clientModel)
            builder.directory = directory
            builder.initialMapSize = RawLMDBEnvironment.mapSize
            return try BenchClient(builder.create(), transport: transport)
        }
    }
}

/// A sync client and its store, whatever the store's type (`SyncClient` is generic over it).
protocol SyncBenchClient: Sendable {
    func push() async throws -> SyncReport
    func pull() async throws -> SyncReport
    /// Creates `people` locally, `perWrite` records a write transaction.
    func create(_ people: [Person], perWrite: Int) throws
    /// Every `Person` of the local store.
    func people() throws -> Checksum
    /// Starts counting the local store's `Person` records as they change.
    func arrivals() -> Arrivals
    func close()
}

private final class BenchClient<Store: Database>: SyncBenchClient {
    let client: SyncClient<Store>

    init(_ database: Store, transport: some SyncTransport) throws {
        do {
            client = try SyncClient(database: database, model: SyncStores.clientModel, transport: transport)
        } catch {
            try? database.close()
            throw error
        }
    }

    func push() async throws -> SyncReport { try await client.push() }
    func pull() async throws -> SyncReport { try await client.pull() }

    func create(_ people: [Person], perWrite: Int) throws {
        for chunk in people.chunks(of: perWrite) {
            try client.database.write { context in try context.create(Array(chunk)) }
        }
    }

    func people() throws -> Checksum {
        try client.database.read { context in Checksum(try context.recover(Person.self, query: Query())) }
    }

    func arrivals() -> Arrivals { Arrivals.counting(Person.self, in: client.database) }

    func close() { try? client.database.close() }
}

/// The sync server's HTTP endpoints (`SyncHTTPHandler`) in a Hummingbird app of the run's own on a free local port,
/// every request allowed everything; ``stop()`` shuts it down.
final class SyncHTTPEndpoint: Sendable {
    /// The endpoints' base URL (`http://127.0.0.1:<port>/sync`).
    let url: URL
    private let app: Task<Void, any Error>

    init(_ server: SyncServer) throws {
        let router = Router()
        SyncHTTPHandler(server: server) { _, _ in .everything }.register(on: router.group("sync"))
        let (ports, port) = AsyncStream<Int>.makeStream()
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.yield($0.localAddress?.port ?? 0) },
            logger: Logger(label: "bench.sync.http", factory: { _ in SwiftLogNoOpLogHandler() }))
        app = Task { try await application.run() }
        let bound = try blockingWait {
            var iterator = ports.makeAsyncIterator()
            return await iterator.next()
        }
        guard let bound, bound > 0, let url = URL(string: "http://127.0.0.1:\(bound)/sync") else {
            app.cancel()
            throw VerificationError(workload: "Y", implementation: "http", message: "the HTTP endpoint didn't start")
        }
        self.url = url
    }

    /// A client transport to the endpoints.
    var transport: HTTPSyncTransport { HTTPSyncTransport(url: url) }

    /// A client transport to endpoints at `url` (through a proxy, say), in `wireFormat`.
    static func transport(_ url: URL, wireFormat: SyncWireFormat = .binary) -> HTTPSyncTransport {
        HTTPSyncTransport(url: url, wireFormat: wireFormat)
    }

    func stop() {
        app.cancel()
        _ = try? blockingWait { [app] in try await app.value }
    }
}
