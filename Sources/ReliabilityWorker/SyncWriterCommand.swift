import ArgumentParser
import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer

/// One numbered record a sync writer commits locally.
struct SyncTick: Entity, Equatable {
    var id: Int64
    var writer: String
}

/// `sync-writer`: commits numbered records (after the highest already in the store) to a synced embedded store, printing `ack N` after each commit, while a
/// sync loop pushes and pulls them continuously through the direct transport — until it is killed.
struct SyncWriter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-writer",
        abstract: "Commit numbered records to a synced store while syncing continuously; print `ack N` per commit.")

    @OptionGroup var server: ServerStoreOptions

    @Option(help: "sqlite or lmdb (encrypted).")
    var backend = "sqlite"

    @Option(help: "The directory of the embedded store.")
    var directory: String

    func run() async throws {
        let serverStore = try server.open([SyncTick.self])
        let syncServer = try SyncServer(database: serverStore, model: Model(version: 1, entities: [SyncTick.self]))
        let model = Model(version: 1, entities: [SyncTick.self]).synced()
        let url = URL(fileURLWithPath: directory)
        switch backend {
        case "sqlite":
            var builder = SQLiteBuilder(databaseName: "client", model: model)
            builder.directory = url
            try await loop(builder.create(), model, syncServer)
        default:
            var builder = LMDBBuilder(databaseName: "client", passphrase: "correct horse", model: model)
            builder.directory = url
            try await loop(builder.create(), model, syncServer)
        }
    }

    private func loop<D: Database>(_ database: D, _ model: Model, _ server: SyncServer) async throws {
        let client = try SyncClient(
            database: database, model: model, transport: server.directTransport, pushBatchSize: 3, pullPageSize: 4)
        let syncing = Task { await client.run(every: .milliseconds(20)) }
        defer { syncing.cancel() }
        // Goes on after the highest record already committed (one in flight when the last process was killed may be
        // there without its `ack`).
        var next =
            try await database.read { context in
                try context.recover(SyncTick.self, query: Query(sortedBy: [.descending("id")], limit: 1)).first?.id
            } ?? 0
        next += 1
        while true {
            let number = next
            try await database.write { try $0.create(SyncTick(id: number, writer: "worker")) }
            WorkerOutput.line("ack \(number)")
            next += 1
            try await Task.sleep(for: .milliseconds(2))
        }
    }
}
