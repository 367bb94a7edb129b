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
import PersistenceTestProcesses
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
    try await withHTTPRouter(router, body)
}

/// Runs `body` with a Hummingbird server in this process serving `router` on a free port (the URL of its `/sync`);
/// stops it afterwards.
func withHTTPRouter(_ router: Router<BasicRequestContext>, _ body: (URL) async throws -> Void) async throws {
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

func httpTransport(_ url: URL, token: String, wireFormat: SyncWireFormat = .binary) -> HTTPSyncTransport {
    HTTPSyncTransport(url: url, timeout: .seconds(30), wireFormat: wireFormat) {
        $0["Authorization"] = "Bearer \(token)"
    }
}

/// The same sync through the HTTP handler and client: convergence, conflicts, refusals, an unreachable server.
@Suite(.timeLimit(.minutes(5)))
struct HTTPSyncTests {
    @Test(arguments: SyncWireFormat.allCases)
    func twoDevicesConvergeOverHTTP(_ wireFormat: SyncWireFormat) async throws {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        try await withHTTPServer(server) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let sqlite = SQLiteBuilder.client("phone", in: directory)
            let phone = try SyncClient(
                database: sqlite.create(), model: clientModel,
                transport: httpTransport(url, token: "admin", wireFormat: wireFormat))
            let lmdb = LMDBBuilder.client("laptop", in: directory, encrypted: true)
            let laptop = try SyncClient(
                database: lmdb.create(), model: clientModel,
                transport: httpTransport(url, token: "admin", wireFormat: wireFormat))
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
            // The convergence check's digests come over HTTP too.
            let convergence = try await laptop.verifyConvergence(syncingFirst: false)
            #expect(convergence.isConverged && convergence.entities.map(\.records) == [1, 1, 1])
        }
    }

    @Test func theHandlerRefusesWhatTheTokenDoesNotAllow() async throws {
        let (store, server) = try await SyncScopeTests.scopedServer()
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
            try await store.write { try $0.create(Project(id: 2, name: "not theirs")) }
            #expect(try await allowed.verifyConvergence().isConverged)
            let other = try SyncClient(
                database: SQLiteBuilder.client("other-digest", in: directory).create(), model: clientModel,
                transport: httpTransport(url, token: "one"), scopes: [SyncScopeTests.project(2)])
            let refusal = await #expect(throws: PersistenceError.self) {
                try await other.verifyConvergence(syncingFirst: false)
            }
            #expect(refusal?.code == .unauthorized)
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

/// The store tool's `sync-verify`: a client's store against its server, over HTTP or the server's store.
@Suite(.timeLimit(.minutes(5)))
struct SyncVerifyCommandTests {
    private func tool(_ arguments: [String], _ environment: [String: String] = [:]) async throws -> BuiltBinary.Result {
        try await offPool { try BuiltBinary("persistence").run(arguments, environment: environment) }
    }

    /// `PERSISTENCE_POSTGRES_URL` for `schema`, its password in `PGPASSWORD`.
    private func serverLocator(schema: String) throws -> (String, [String: String]) {
        var components = try #require(URLComponents(string: serverURL()))
        var environment: [String: String] = [:]
        if let password = components.password { environment["PGPASSWORD"] = password }
        components.password = nil
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: schema)]
        return (try #require(components.string), environment)
    }

    @Test func theToolNamesWhatDiffersOverHTTPAndAgainstTheServersStore() async throws {
        let (store, server) = try await SyncScopeTests.scopedServer()
        try await withHTTPServer(server) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let lmdb = LMDBBuilder.client("laptop", in: directory, encrypted: true)
            let laptop = try SyncClient(
                database: lmdb.create(), model: clientModel, transport: httpTransport(url, token: "admin"))
            let sqlite = SQLiteBuilder.client("phone", in: directory)
            let phone = try SyncClient(
                database: sqlite.create(), model: clientModel, transport: httpTransport(url, token: "one"),
                scopes: [SyncScopeTests.project(1), SyncScopeTests.chores(1)])
            try await laptop.database.write { context in
                try context.create([Project(id: 1, name: "One"), Project(id: 2, name: "Two")])
                try context.create(Chore(id: "a", projectID: 1, title: "A", done: false, revision: 1))
            }
            try await laptop.sync()
            try await phone.sync()
            let laptopFile = directory.appendingPathComponent("laptop.lmdb").path
            let phoneFile = directory.appendingPathComponent("phone.sqlite").path
            let environment = ["SYNC_TOKEN": "Bearer one", "ADMIN_TOKEN": "Bearer admin", "PASS": "correct horse"]
            let scoped = try await tool(
                ["sync-verify", phoneFile, "--server", url.absoluteString, "--authorization-env", "SYNC_TOKEN"],
                environment)
            #expect(scoped.status == 0 && scoped.output.contains("converged"), "\(scoped.output) \(scoped.errors)")
            #expect(scoped.output.contains("Project: same (1 records"), "\(scoped.output)")

            // A write behind sync's back, on the encrypted LMDB store (read in the tool's child process).
            try await laptop.database.write(options: .appliesRemoteChanges) {
                try $0.update(Project(id: 2, name: "edited locally, never journaled"))
            }
            let http = try await tool(
                [
                    "sync-verify", laptopFile, "--server", url.absoluteString, "--authorization-env", "ADMIN_TOKEN",
                    "--passphrase-env", "PASS", "--json",
                ], environment)
            #expect(http.status == 1, "\(http.output) \(http.errors)")
            #expect(http.output.contains("\"differing\" : [\n    \"Project\"\n  ]"), "\(http.output)")

            // The server's own store, for a client of the whole store; a scoped one needs the server's scopes.
            let (postgres, serverEnvironment) = try serverLocator(schema: store.schema)
            let direct = try await tool(
                ["sync-verify", laptopFile, "--server", postgres, "--passphrase-env", "PASS"],
                environment.merging(serverEnvironment) { a, _ in a })
            #expect(
                direct.status == 1 && direct.output.hasSuffix("differs: Project\n"), "\(direct.output) \(direct.errors)"
            )
            let scopedDirect = try await tool(["sync-verify", phoneFile, "--server", postgres], serverEnvironment)
            #expect(scopedDirect.status == 64 && scopedDirect.errors.contains("scopes"), "\(scopedDirect.errors)")
            // A wrong token: refused, its own status.
            let refused = try await tool(
                ["sync-verify", phoneFile, "--server", url.absoluteString, "--authorization-env", "PASS"], environment)
            #expect(refused.status == 77, "\(refused.errors)")
            // A store that isn't a sync client's.
            _ = try SQLiteBuilder.client("plain", in: directory, model: serverModel).create()
            let notClient = try await tool(
                ["sync-verify", directory.appendingPathComponent("plain.sqlite").path, "--server", postgres],
                serverEnvironment)
            #expect(notClient.status == 64 && notClient.errors.contains("no sync journal"), "\(notClient.errors)")
        }
    }
}
