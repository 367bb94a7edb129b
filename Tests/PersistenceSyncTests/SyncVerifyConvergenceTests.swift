import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Testing

/// A transport from before convergence checks: push and pull only.
private struct PushPullOnly: SyncTransport {
    let inner: any SyncTransport
    func push(_ push: SyncPush) async throws -> SyncPushResult { try await inner.push(push) }
    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage { try await inner.pull(request) }
}

/// `verifyConvergence`: a client proves, entity by entity, that it holds the server's records of its scopes.
@Suite(.timeLimit(.minutes(5)))
struct SyncVerifyConvergenceTests {
    private static func seed(_ client: any TestSyncClient) async throws {
        try await client.write { context in
            try context.create([Project(id: 1, name: "One"), Project(id: 2, name: "Two")])
            try context.create(Chore(id: "B", projectID: 1, title: "upper", done: false, revision: 1))
            try context.create(Chore(id: "a", projectID: 2, title: "lower", done: true, revision: 3))
            try context.create(Memo(id: UUID(), text: "é ✓", tags: ""))
        }
    }

    @Test(arguments: ClientKind.allCases)
    func aSyncedClientProvesItHoldsTheServersRecords(kind: ClientKind) async throws {
        let devices = try await TwoDevices.make(phone: .sqlite, laptop: kind)
        defer { devices.remove() }
        try await Self.seed(devices.phone)
        let phone = try await devices.phone.verifyConvergence(syncingFirst: true)
        let laptop = try await devices.laptop.verifyConvergence(syncingFirst: true)
        #expect(phone.isConverged && laptop.isConverged && laptop.pendingChanges == 0)
        #expect(laptop.entities.map(\.entity) == ["Chore", "Memo", "Project"])
        #expect(laptop.entities.map(\.records) == [2, 1, 2])
        // The digest is backend-neutral: a SQLite store and an LMDB one (encrypted or not) hash the same records alike.
        #expect(phone.entities == laptop.entities)
        #expect(laptop.entities.allSatisfy { $0.digest.hasPrefix("sha256:") && $0.digest.count == 71 })
    }

    @Test func aChangeThatNeverReachedTheJournalIsNamed() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        try await Self.seed(devices.phone)
        try await devices.phone.sync()
        #expect(try await devices.laptop.verifyConvergence(syncingFirst: true).entities.map(\.records) == [2, 1, 2])
        let laptop = try #require(devices.laptop as? SyncClient<LMDBDatabase>)
        // Writes that bypass the journal (as a sync bug or a restored backup would): nothing pushes them.
        try await laptop.database.write(options: .appliesRemoteChanges) { context in
            try context.update(
                Chore(id: "a", projectID: 2, title: "edited behind sync's back", done: true, revision: 3))
            try context.create(Project(id: 3, name: "never synced"))
        }
        let asItIs = try await laptop.verifyConvergence(syncingFirst: false)
        #expect(asItIs.differingEntities == ["Chore", "Project"] && asItIs.pendingChanges == 0)
        let chores = try #require(asItIs.differences.first)
        #expect(chores.localRecords == 2 && chores.serverRecords == 2 && chores.localDigest != chores.serverDigest)
        let projects = try #require(asItIs.differences.last)
        #expect(projects.localRecords == 3 && projects.serverRecords == 2)
        // Syncing doesn't repair a record only the client holds. (The edited chore may be: a pull reads again the
        // changes after the server's oldest running transaction, another test's on a shared server.)
        let synced = try await laptop.verifyConvergence()
        #expect(synced.differingEntities.contains("Project") && synced.pendingChanges == 0)
        // The phone, untouched, still matches.
        #expect(try await devices.phone.verifyConvergence(syncingFirst: true).isConverged)
    }

    @Test func withoutSyncingFirstChangesOnTheirWayDiffer() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        try await Self.seed(devices.phone)
        try await devices.phone.sync()
        try await devices.laptop.sync()
        // The server moves on (a write by another program), the laptop holds a change not yet pushed.
        try await devices.store.write { try $0.update(Project(id: 2, name: "renamed on the server")) }
        try await devices.laptop.write { try $0.delete(Memo.self, where: Field("text") == "é ✓") }
        let before = try await devices.laptop.verifyConvergence(syncingFirst: false)
        #expect(before.differingEntities == ["Memo", "Project"] && before.pendingChanges == 1)
        let after = try await devices.laptop.verifyConvergence(syncingFirst: true)
        #expect(after.isConverged && after.pendingChanges == 0)
        #expect(after.entities.map(\.records) == [2, 0, 2])
    }

    @Test func aScopedClientComparesItsScopesOnly() async throws {
        let (store, server) = try await SyncScopeTests.seededServer()
        try await store.write { try $0.create(Memo(id: UUID(), text: "outside every scope", tags: "")) }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scopes = [SyncScopeTests.project(1), SyncScopeTests.chores(1)]
        let phone = try SyncClient(
            database: SQLiteBuilder.client("phone", in: directory).create(), model: clientModel,
            transport: DirectSyncTransport(server: server, access: .only(Set(scopes))), scopes: scopes)
        let convergence = try await phone.verifyConvergence()
        #expect(convergence.isConverged)
        #expect(convergence.entities.map(\.records) == [1, 0, 1])

        // Only scopes the client may sync: asking the server to hash others is refused like a pull.
        let intruder = try SyncClient(
            database: SQLiteBuilder.client("intruder", in: directory).create(), model: clientModel,
            transport: DirectSyncTransport(server: server, access: .only(Set(scopes))),
            scopes: [SyncScopeTests.project(2)])
        let refusal = await #expect(throws: PersistenceError.self) {
            try await intruder.verifyConvergence(syncingFirst: false)
        }
        #expect(refusal?.code == .unauthorized)
    }

    @Test func aTransportWithoutDigestsRefusesTheCheck() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let client = try SyncClient(
            database: SQLiteBuilder.client("old", in: setup.directory).create(), model: clientModel,
            transport: PushPullOnly(inner: setup.server.directTransport))
        let refusal = await #expect(throws: PersistenceError.self) { try await client.verifyConvergence() }
        #expect(refusal?.code == .invalidConfiguration)
    }
}
