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

/// A note two devices edit offline; its `revision` stamp decides conflicts (the newest wins).
struct SharedNote: Entity, Equatable {
    var id: Int64
    var text: String
    var revision: Int64
    static let stampAttribute = "revision"
}

/// Sync: a phone (SQLite, over HTTP) and a laptop (encrypted LMDB, direct) edit offline, conflict, and converge with
/// a PostgreSQL store served by a Hummingbird handler in this process.
enum SyncDemo {
    static let serverModel = Model(version: 1, entities: [SharedNote.self])

    static func run(_ base: PostgresBuilder, in directory: URL, console: Console) async throws {
        console.step("Sync: two devices offline, one server (PostgreSQL), over HTTP and direct")
        var builder = base
        builder.model = serverModel
        builder.schema = "persistence_demo_sync"
        try builder.deleteStore()
        let store = try builder.create()
        defer {
            try? store.close()
            _ = try? builder.deleteStore()
        }
        let server = try SyncServer(database: store, model: serverModel)
        let router = Router()
        SyncHTTPHandler(server: server) { request, _ in
            guard request.headers[.authorization] == "Bearer demo" else {
                throw PersistenceError(.unauthorized, "no valid token")
            }
            return .everything
        }.register(on: router.group("sync"))
        let (ports, port) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { port.yield($0.localAddress?.port ?? 0) })
        let serving = Task { try await app.run() }
        defer { serving.cancel() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(bound)/sync") else {
            throw DemoError.unexpected("the sync HTTP server didn't start")
        }
        console.detail("server: schema \"\(builder.schema)\", HTTP handler at \(url)")

        let model = serverModel.synced()
        var phoneStore = SQLiteBuilder(databaseName: "phone", model: model)
        phoneStore.directory = directory
        let phone = try SyncClient(
            database: phoneStore.create(), model: model,
            transport: HTTPSyncTransport(url: url) { $0["Authorization"] = "Bearer demo" })
        var laptopStore = LMDBBuilder(databaseName: "laptop", passphrase: "demo passphrase", model: model)
        laptopStore.directory = directory
        let laptop = try SyncClient(
            database: laptopStore.create(), model: model, transport: server.directTransport)

        try await phone.database.write { context in
            try context.create(SharedNote(id: 1, text: "Buy milk", revision: 1))
            try context.create(SharedNote(id: 2, text: "Call Ann", revision: 1))
        }
        let first = try await phone.sync()
        _ = try await laptop.sync()
        console.detail("phone pushed \(first.pushed) notes; the laptop pulled them")

        // Offline on both: each edits note 1 (the laptop later, with a newer stamp); the phone deletes note 2; the
        // laptop adds note 3.
        try await phone.database.write { context in
            try context.update(SharedNote(id: 1, text: "Buy milk and eggs", revision: 2))
            _ = try context.delete(SharedNote.self, id: 2)
        }
        try await laptop.database.write { context in
            try context.update(SharedNote(id: 1, text: "Buy oat milk", revision: 3))
            try context.create(SharedNote(id: 3, text: "Water the plants", revision: 1))
        }
        console.detail(
            "offline: phone has \(try await phone.pendingCount()) changes pending, laptop \(try await laptop.pendingCount())"
        )
        // The laptop syncs first; the phone's older edit of note 1 then loses, and says so.
        _ = try await laptop.sync()
        let phoneReport = try await phone.sync()
        _ = try await laptop.sync()
        for rejection in phoneReport.rejections {
            console.detail("phone's change to note \(Console.show(rejection.key)) not kept: \(rejection.reason)")
        }
        try console.check(phoneReport.rejections.count == 1, "the phone's older edit wasn't reported as rejected")

        let onServer = try await store.read { try $0.recover(SharedNote.self, query: Query()) }
        let onPhone = try await phone.database.read { try $0.recover(SharedNote.self, query: Query()) }
        let onLaptop = try await laptop.database.read { try $0.recover(SharedNote.self, query: Query()) }
        for note in onServer { console.detail("  note \(note.id): \(note.text) (revision \(note.revision))") }
        try console.check(
            onServer == onPhone && onServer == onLaptop && onServer.map(\.id) == [1, 3]
                && onServer.first?.text == "Buy oat milk",
            "the devices didn't converge with the server")
        console.detail("phone, laptop and server hold the same \(onServer.count) notes")
    }
}
