import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// The server restarts (`pg_ctl restart -m fast`, every connection dropped) while two devices write and sync: each
/// failed sync is a typed error that loses nothing, and once the server is back both converge with it.
@Suite(.timeLimit(.minutes(5)))
struct SyncRestartTests {
    @Test func devicesSyncingThroughServerRestartsConvergeAndLoseNothing() async throws {
        let own = try OwnServer()
        defer { own.stop() }
        var builder = try PostgresBuilder(url: own.url, model: serverModel)
        builder.schema = "sync_restart"
        let opening = builder
        let store = try await offPool { try opening.create() }
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let clients: [any TestSyncClient] = [
            try SyncClient(
                database: SQLiteBuilder.client("phone", in: directory).create(), model: clientModel,
                transport: server.directTransport),
            try SyncClient(
                database: LMDBBuilder.client("laptop", in: directory, encrypted: true).create(), model: clientModel,
                transport: server.directTransport),
        ]
        var failures = 0
        var created = Set<UUID>()
        for round in 0..<3 {
            let restart = try own.restart()
            // Writes and syncs while the server goes down and comes back (and a few more after).
            var step = 0
            while restart.isRunning || step < 10 {
                step += 1
                for (index, client) in clients.enumerated() {
                    let id = UUID()
                    let text = "r\(round) s\(step) c\(index)"
                    created.insert(id)
                    try await client.write { try $0.create(Memo(id: id, text: text, tags: "")) }
                    do {
                        _ = try await client.sync()
                    } catch let error as PersistenceError {
                        #expect(
                            [.unreachable, .connectionLost, .commitOutcomeUnknown, .busy].contains(error.code),
                            "\(error)")
                        failures += 1
                    }
                }
            }
            restart.waitUntilExit()
            #expect(restart.terminationStatus == 0)
        }
        for _ in 0..<2 {
            for client in clients { _ = try await client.sync() }
        }
        let expected = try await Contents.of(store)
        #expect(Set(expected.memos.map(\.id)) == created, "every local write reached the server, once")
        for client in clients {
            #expect(try await client.contents() == expected)
            #expect(try await client.pendingCount() == 0)
        }
        print("sync through 3 server restarts: \(failures) syncs failed with a typed error, none lost")
    }
}
