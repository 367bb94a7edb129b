import Foundation
import Hummingbird
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncHTTP
import PersistenceSyncHummingbird
import PersistenceSyncServer
import Testing

/// Runs `body` with a Hummingbird server in this process serving `server`'s endpoints at `/sync`, on a free port;
/// stops it afterwards. Tokens: `admin` may sync everything, `one` only project 1 and its chores.
func withHTTPServer(_ server: SyncServer, _ body: (URL) async throws -> Void) async throws {
    let router = Router()
    SyncHTTPHandler(server: server) { request, _ in
        switch request.headers[.authorization] {
        case "Bearer admin": return .everything
        case "Bearer one": return .only([SyncScopeTests.project(1), SyncScopeTests.chores(1)])
        default: throw PersistenceError(.unauthorized, "no valid token")
        }
    }.register(on: router.group("sync"))
    let (ports, port) = AsyncStream<Int>.makeStream()
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { port.yield($0.localAddress?.port ?? 0) })
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(bound)/sync") else {
            throw PersistenceError(.backend, "the test HTTP server didn't start")
        }
        do {
            try await body(url)
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

func httpTransport(_ url: URL, token: String) -> HTTPSyncTransport {
    HTTPSyncTransport(url: url, timeout: .seconds(30)) { $0["Authorization"] = "Bearer \(token)" }
}

/// The same sync through the HTTP handler and client: convergence, conflicts, refusals, an unreachable server.
@Suite(.timeLimit(.minutes(5)))
struct HTTPSyncTests {
    @Test func twoDevicesConvergeOverHTTP() async throws {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        try await withHTTPServer(server) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let sqlite = SQLiteBuilder.client("phone", in: directory)
            let phone = try SyncClient(
                database: sqlite.create(), model: clientModel, transport: httpTransport(url, token: "admin"))
            let lmdb = LMDBBuilder.client("laptop", in: directory, encrypted: true)
            let laptop = try SyncClient(
                database: lmdb.create(), model: clientModel, transport: httpTransport(url, token: "admin"))
            try await phone.database.write { context in
                try context.create(Project(id: 1, name: "One"))
                try context.create(
                    Chore(id: "é ' ; DROP TABLE x; --", projectID: 1, title: "odd", done: false, revision: 1))
                try context.create(Memo(id: UUID(), text: String(repeating: "x", count: 10_000), tags: "\u{0}nul"))
            }
            try await phone.sync()
            try await laptop.sync()
            #expect(try await laptop.contents() == phone.contents())
            try await phone.database.write { try $0.update(Project(id: 1, name: "phone")) }
            try await laptop.database.write { try $0.update(Project(id: 1, name: "laptop")) }
            try await phone.sync()
            let report = try await laptop.sync()
            #expect(report.rejections.count == 1)
            #expect(try await laptop.contents() == Contents.of(store))
            #expect(try await phone.contents() == Contents.of(store))
        }
    }

    @Test func theHandlerRefusesWhatTheTokenDoesNotAllow() async throws {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool {
            try SyncServer(database: store, model: serverModel, scopes: SyncScopeTests.definitions)
        }
        try await withHTTPServer(server) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            for (name, token, scopes) in [
                ("nobody", "wrong", [SyncScopeTests.project(1)]), ("other", "one", [SyncScopeTests.project(2)]),
                ("whole", "one", nil),
            ] as [(String, String, [SyncScope]?)] {
                let builder = SQLiteBuilder.client(name, in: directory)
                let client = try SyncClient(
                    database: builder.create(), model: clientModel, transport: httpTransport(url, token: token),
                    scopes: scopes)
                do {
                    try await client.sync()
                    Issue.record("\(name) synced")
                } catch let error as PersistenceError {
                    #expect(error.code == .unauthorized, "\(error)")
                }
            }
            let builder = SQLiteBuilder.client("allowed", in: directory)
            let allowed = try SyncClient(
                database: builder.create(), model: clientModel, transport: httpTransport(url, token: "one"),
                scopes: [SyncScopeTests.project(1), SyncScopeTests.chores(1)])
            try await allowed.database.write { try $0.create(Project(id: 1, name: "mine")) }
            try await allowed.sync()
            #expect(try await Contents.of(store).projects == [Project(id: 1, name: "mine")])
        }
    }

    @Test func anUnreachableServerIsATypedErrorAndLosesNothing() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let builder = SQLiteBuilder.client("offline", in: directory)
        // A port nothing listens on.
        let client = try SyncClient(
            database: builder.create(), model: clientModel,
            transport: httpTransport(URL(string: "http://127.0.0.1:9/sync")!, token: "admin"))
        try await client.database.write { try $0.create(Project(id: 1, name: "offline")) }
        do {
            try await client.sync()
            Issue.record("synced with nobody")
        } catch let error as PersistenceError {
            #expect(error.code == .unreachable, "\(error)")
        }
        #expect(try await client.pendingCount() == 1)
    }
}
