import Foundation
import PersistenceSQLite  // brings PersistenceCore with it
import PersistenceSync

/// An entity defined by the consumer, as an app would.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
}

/// A transport of the app's own that keeps what is pushed and answers that it was applied: the client needs no
/// server code to be built.
final class RecordingTransport: SyncTransport, @unchecked Sendable {
    // Guarded by `lock`.
    private var pushed: [SyncChange] = []
    private let lock = NSLock()

    var changes: [SyncChange] { lock.withLock { pushed } }

    func push(_ push: SyncPush) async throws -> SyncPushResult {
        lock.withLock { pushed += push.entries.map(\.change) }
        return SyncPushResult(
            outcomes: push.entries.map {
                .init(
                    sequence: $0.sequence, entity: $0.change.entity, key: $0.change.key, kind: .applied,
                    current: $0.change, reason: nil)
            })
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        SyncPullPage(changes: [], next: nil, cursor: 1)
    }
}

/// Writes a note to a synced store, pushes it through the transport; exits non-zero when it didn't go out once.
func check() async throws -> Bool {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("persistence-sync-consumer-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    let model = Model(version: 1, entities: [Note.self]).synced()
    var builder = SQLiteBuilder(databaseName: "Consumer", model: model)
    builder.directory = directory
    let database = try builder.create()
    let transport = RecordingTransport()
    let client = try SyncClient(database: database, model: model, transport: transport)
    try await database.write { try $0.create(Note(id: 1, title: "offline")) }
    let pending = try await client.pendingCount()
    let report = try await client.sync()
    let left = try await client.pendingCount()
    return pending == 1 && report.pushed == 1 && transport.changes.map(\.key) == [.integer(1)] && left == 0
}

if try await check() {
    print("OK")
} else {
    print("FAILED: the synced note didn't go out exactly once")
    exit(1)
}
