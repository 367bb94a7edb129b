import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Testing

/// A project: integer keys, no stamp (server wins unless told otherwise).
struct Project: Entity, Equatable {
    var id: Int64
    var name: String
}

/// A task in a project: text keys, a stamp, deleted with its project.
struct Chore: Entity, Equatable {
    var id: String
    var projectID: Int64
    var title: String
    var done: Bool
    var revision: Int64
    static let stampAttribute = "revision"
    static let relationships: [Relationship] = [
        .toOne("project", Project.self, foreignKey: "projectID", onDelete: .cascade)
    ]
}

/// A note: UUID keys (blobs), for the client-wins and merge policies.
struct Memo: Entity, Equatable {
    var id: UUID
    var text: String
    var tags: String
}

let serverModel = Model(version: 1, entities: [Project.self, Chore.self, Memo.self])
let clientModel = serverModel.synced()

/// The server the tests use: `PERSISTENCE_POSTGRES_URL` (`make test` starts one and sets it). Without it the tests
/// fail rather than skip.
func serverURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"], !url.isEmpty else {
        throw PersistenceError(
            .invalidConfiguration, "PERSISTENCE_POSTGRES_URL is not set: run the tests through `make test`")
    }
    return url
}

/// A PostgreSQL store in a fresh schema of its own.
func freshServerStore(_ model: Model = serverModel) throws -> PostgresDatabase {
    var builder = try PostgresBuilder(url: serverURL(), model: model)
    builder.schema = "sync_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
    return try builder.create()
}

/// Runs blocking code on a thread of its own, off the cooperative pool.
func offPool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// The embedded stores a client can be.
enum ClientKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, lmdb, encryptedLMDB

    var testDescription: String { rawValue }
}

/// A client's store, type-erased enough for the tests: its client and a way to read everything.
struct TestClient: Sendable {
    let kind: ClientKind
    let client: any TestSyncClient
    let directory: URL

    static func make(_ kind: ClientKind, in directory: URL, server: SyncServer, name: String = "client") throws
        -> TestClient
    {
        let transport = server.directTransport
        let client: any TestSyncClient =
            switch kind {
            case .sqlite:
                try SyncClient(
                    database: SQLiteBuilder.client(name, in: directory).create(), model: clientModel,
                    transport: transport)
            case .lmdb, .encryptedLMDB:
                try SyncClient(
                    database: LMDBBuilder.client(name, in: directory, encrypted: kind == .encryptedLMDB).create(),
                    model: clientModel, transport: transport)
            }
        return TestClient(kind: kind, client: client, directory: directory)
    }
}

/// What the tests need of a `SyncClient` whatever its store: the public `SyncClientProtocol`, and a way to write and
/// read everything.
protocol TestSyncClient: SyncClientProtocol {
    func write(_ body: @escaping @Sendable (any DatabaseContext) throws -> Void) async throws
    func contents() async throws -> Contents
    /// How many journal entries are flagged as pending, and how many have an outbox sequence: always the same.
    func outbox() async throws -> [Int]
}

extension SyncClient: TestSyncClient {
    func outbox() async throws -> [Int] {
        try await database.read { context in
            [
                try context.count(SyncRecordState.self, where: Field("isPending") == true),
                try context.count(SyncRecordState.self, where: Field("pending") > Int64(0)),
            ]
        }
    }

    func write(_ body: @escaping @Sendable (any DatabaseContext) throws -> Void) async throws {
        try await database.write { try body($0) }
    }

    func contents() async throws -> Contents {
        try await database.read { try Contents(in: $0) }
    }
}

/// Every synced record of a store, to compare stores by content.
struct Contents: Equatable, Sendable, CustomStringConvertible {
    var projects: [Project]
    var chores: [Chore]
    var memos: [Memo]

    init(in context: some DatabaseContext) throws {
        projects = try context.recover(Project.self, query: Query(sortedBy: [.ascending("id")]))
        chores = try context.recover(Chore.self, query: Query(sortedBy: [.ascending("id")]))
        memos = try context.recover(Memo.self, query: Query()).sorted { $0.id.uuidString < $1.id.uuidString }
    }

    static func of(_ database: PostgresDatabase) async throws -> Contents {
        try await database.read { try Contents(in: $0) }
    }

    var description: String { "\(projects.count) projects, \(chores.count) chores, \(memos.count) memos" }
}

/// A new empty folder under the system's temporary directory.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "sync-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// A new server store with a sync server on it, and a new folder for the clients' stores; ``remove()`` deletes the
/// folder.
struct ServerAndFolder {
    let store: PostgresDatabase
    let server: SyncServer
    let directory: URL

    static func make() async throws -> ServerAndFolder {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        return ServerAndFolder(store: store, server: server, directory: try temporaryDirectory())
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// A server store, its sync server and two devices in a new folder — the start of most tests; ``remove()`` deletes the
/// folder.
struct TwoDevices {
    let setup: ServerAndFolder
    let phone: any TestSyncClient
    let laptop: any TestSyncClient

    var store: PostgresDatabase { setup.store }
    var server: SyncServer { setup.server }

    /// A phone of `phone`'s kind and a laptop of `laptop`'s, both syncing directly with a new server store.
    static func make(phone: ClientKind = .sqlite, laptop: ClientKind) async throws -> TwoDevices {
        let setup = try await ServerAndFolder.make()
        return TwoDevices(
            setup: setup,
            phone: try TestClient.make(phone, in: setup.directory, server: setup.server, name: "phone").client,
            laptop: try TestClient.make(laptop, in: setup.directory, server: setup.server, name: "laptop").client)
    }

    func remove() { setup.remove() }
}

extension SQLiteBuilder {
    /// A client's store named `name` in `directory`, of `model`.
    static func client(_ name: String, in directory: URL, model: Model = clientModel) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: name, model: model)
        builder.directory = directory
        return builder
    }
}

extension LMDBBuilder {
    /// A client's store named `name` in `directory`, of `model`; encrypted with the tests' passphrase or not.
    static func client(_ name: String, in directory: URL, model: Model = clientModel, encrypted: Bool)
        -> LMDBBuilder
    {
        var builder =
            encrypted
            ? LMDBBuilder(databaseName: name, passphrase: "correct horse", model: model)
            : LMDBBuilder.unencrypted(databaseName: name, model: model)
        builder.directory = directory
        return builder
    }
}
