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

#if canImport(Glibc)
    import Glibc
#endif

/// `ReliabilityWorker sync-writer`'s record (the same shape: the test opens the worker's stores).
struct SyncTick: Entity, Equatable {
    var id: Int64
    var writer: String
}

/// kill -9 at random moments while a process commits locally and syncs continuously (mid-push, mid-pull, mid-commit):
/// after every kill the store reopens and the next process goes on; at the end one clean sync leaves the client equal
/// to the server, with every acknowledged local commit on both.
@Suite(.timeLimit(.minutes(5)))
struct SyncKillTests {
    @Test(arguments: ["sqlite", "lmdb"])
    func killedWhileSyncingLosesNothing(backend: String) async throws {
        let serverModel = Model(version: 1, entities: [SyncTick.self])
        var builder = try PostgresBuilder(url: serverURL(), model: serverModel)
        builder.schema =
            "sync_kill_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let schema = builder.schema
        let opening = builder
        let store = try await offPool { try opening.create() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededGenerator(seed: 20_261_126 &+ UInt64(backend.utf8.count))
        var acknowledged: Int64 = 0
        for round in 0..<12 {
            let worker = try WorkerProcess(
                [
                    "sync-writer", "--url", serverURL(), "--schema", schema, "--backend", backend, "--directory",
                    directory.path,
                ], errorFile: directory.appendingPathComponent("worker-\(round).stderr"))
            let target = Int.random(in: 1...25, using: &random)
            var seen = 0
            while seen < target, let line = worker.nextLine() {
                acknowledged = try number(line)
                seen += 1
            }
            usleep(UInt32.random(in: 0..<20_000, using: &random))
            worker.kill()
            for line in worker.remainingLines() { acknowledged = try number(line) }
            let ended = worker.wait()
            if ended != .signal(SIGKILL) { Issue.record("the worker ended by itself: \(worker.errors)") }
        }
        // The next process: one clean sync of the same store.
        let model = serverModel.synced()
        let server = try await offPool { try SyncServer(database: store, model: serverModel) }
        let local: any KillCheckedClient =
            backend == "sqlite"
            ? try SyncClient(
                database: SQLiteBuilder.client("client", in: directory, model: model).create(), model: model,
                transport: server.directTransport)
            : try SyncClient(
                database: LMDBBuilder.client("client", in: directory, model: model, encrypted: true).create(),
                model: model,
                transport: server.directTransport)
        try await local.syncTwice()
        let onServer = try await store.read { try $0.recover(SyncTick.self, query: Query()) }.map(\.id)
        let held = try await local.ticks()
        #expect(held == onServer)
        #expect(Set(1...acknowledged).isSubset(of: Set(onServer)), "an acknowledged commit never reached the server")
        #expect(onServer.count <= acknowledged + 1, "at most the commit in flight beyond the acknowledged ones")
    }

    private func number(_ line: String) throws -> Int64 {
        guard line.hasPrefix("ack "), let number = Int64(line.dropFirst(4)) else {
            throw PersistenceError(.invalidArgument, "the worker wrote '\(line)'")
        }
        return number
    }
}

protocol KillCheckedClient: Sendable {
    func syncTwice() async throws
    func ticks() async throws -> [Int64]
}

extension SyncClient: KillCheckedClient {
    func syncTwice() async throws {
        _ = try await sync()
        _ = try await sync()
    }

    func ticks() async throws -> [Int64] {
        try await database.read { try $0.recover(SyncTick.self, query: Query()) }.map(\.id)
    }
}
