import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistenceSyncServer

/// Two devices and a server: offline edits converge; conflicts are settled by policy and reported; pushes apply once.
@Suite(.timeLimit(.minutes(5)))
struct SyncTests {
    @Test func offlineEditsOnTwoDevicesConvergeWithTheServer() async throws {
        let devices = try await TwoDevices.make(laptop: .encryptedLMDB)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)

        try await phone.write { context in
            try context.create(Project(id: 1, name: "Home"))
            try context.create(Chore(id: "a", projectID: 1, title: "Dishes", done: false, revision: 1))
            try context.create(
                Memo(id: UUID(uuidString: "00000000-0000-0000-0000-0000000000AA")!, text: "hi", tags: ""))
        }
        #expect(try await phone.pendingCount() == 3)
        let first = try await phone.sync()
        #expect(first.pushed == 3 && first.rejections.isEmpty)
        #expect(try await phone.pendingCount() == 0)
        _ = try await laptop.sync()
        #expect(try await laptop.contents() == phone.contents())

        // Offline on both: different records change, one is deleted.
        try await phone.write { context in
            try context.update(Chore(id: "a", projectID: 1, title: "Dishes", done: true, revision: 2))
            try context.create(Project(id: 2, name: "Work"))
        }
        try await laptop.write { context in
            try context.create(Chore(id: "b", projectID: 1, title: "Laundry", done: false, revision: 1))
            _ = try context.delete(Memo.self, where: nil)
        }
        _ = try await phone.sync()
        _ = try await laptop.sync()
        _ = try await phone.sync()
        let expected = try await Contents.of(store)
        #expect(expected.projects.map(\.id) == [1, 2])
        #expect(expected.chores.map(\.id) == ["a", "b"] && expected.chores[0].done)
        #expect(expected.memos.isEmpty)
        #expect(try await phone.contents() == expected)
        #expect(try await laptop.contents() == expected)

        // A cascade on one device reaches the other as deletions.
        try await laptop.write { context in _ = try context.delete(Project.self, id: 1) }
        _ = try await laptop.sync()
        _ = try await phone.sync()
        #expect(try await phone.contents() == Contents.of(store))
        #expect(try await Contents.of(store).chores.isEmpty)
    }

    @Test func aConflictTheServerWinsComesBackAsARejectionAndTheServersState() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)
        try await phone.write { try $0.create(Project(id: 7, name: "Garden")) }
        _ = try await phone.sync()
        _ = try await laptop.sync()

        try await phone.write { try $0.update(Project(id: 7, name: "Garden (phone)")) }
        try await laptop.write { try $0.update(Project(id: 7, name: "Garden (laptop)")) }
        #expect(try await phone.sync().rejections.isEmpty)
        let report = try await laptop.sync()
        #expect(report.rejections.count == 1)
        #expect(report.rejections.first?.serverState.values?["name"] == .text("Garden (phone)"))
        #expect(try await laptop.contents().projects == [Project(id: 7, name: "Garden (phone)")])
        #expect(try await laptop.pendingCount() == 0)

        // A deletion against a server edit is a conflict too.
        try await phone.write { try $0.update(Project(id: 7, name: "Garden 2")) }
        try await laptop.write { _ = try $0.delete(Project.self, id: 7) }
        _ = try await phone.sync()
        #expect(try await laptop.sync().rejections.count == 1)
        #expect(try await laptop.contents() == Contents.of(store))
        #expect(try await laptop.contents().projects == [Project(id: 7, name: "Garden 2")])
    }

    @Test func deletingOnBothSidesOrRecreatingAfterAnUnseenDeletionIsNoConflict() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)
        try await phone.write { try $0.create(Project(id: 7, name: "Both delete it")) }
        _ = try await phone.sync()
        _ = try await laptop.sync()
        try await phone.write { _ = try $0.delete(Project.self, id: 7) }
        try await laptop.write { _ = try $0.delete(Project.self, id: 7) }
        #expect(try await phone.sync().rejections.isEmpty)
        #expect(try await laptop.sync().rejections.isEmpty, "the same deletion on both sides isn't a conflict")

        // The phone creates and deletes a record the laptop never sees; the laptop then creates one with its key.
        try await phone.write { try $0.create(Project(id: 8, name: "short-lived")) }
        _ = try await phone.sync()
        try await phone.write { _ = try $0.delete(Project.self, id: 8) }
        _ = try await phone.sync()
        try await laptop.write { try $0.create(Project(id: 8, name: "new")) }
        #expect(try await laptop.sync().rejections.isEmpty, "a deletion the client never saw isn't a conflict")
        _ = try await phone.sync()
        #expect(try await Contents.of(store).projects == [Project(id: 8, name: "new")])
        #expect(try await phone.contents() == laptop.contents())
    }

    @Test func theNewestStampWinsEitherWay() async throws {
        let devices = try await TwoDevices.make(laptop: .encryptedLMDB)
        defer { devices.remove() }
        let (phone, laptop) = (devices.phone, devices.laptop)
        try await phone.write { context in
            try context.create(Project(id: 1, name: "P"))
            try context.create(Chore(id: "x", projectID: 1, title: "v1", done: false, revision: 1))
        }
        _ = try await phone.sync()
        _ = try await laptop.sync()

        // The laptop's edit is newer though it syncs second: it wins.
        try await phone.write { try $0.update(Chore(id: "x", projectID: 1, title: "phone", done: false, revision: 2)) }
        try await laptop.write {
            try $0.update(Chore(id: "x", projectID: 1, title: "laptop", done: false, revision: 3))
        }
        #expect(try await phone.sync().rejections.isEmpty)
        #expect(try await laptop.sync().rejections.isEmpty)
        _ = try await phone.sync()
        #expect(try await phone.contents().chores.first?.title == "laptop")

        // An older edit that syncs second loses, and says so.
        try await laptop.write {
            try $0.update(Chore(id: "x", projectID: 1, title: "laptop old", done: false, revision: 4))
        }
        try await phone.write {
            try $0.update(Chore(id: "x", projectID: 1, title: "phone new", done: true, revision: 5))
        }
        _ = try await phone.sync()
        let report = try await laptop.sync()
        #expect(report.rejections.map(\.entity) == ["Chore"])
        #expect(try await laptop.contents() == phone.contents())
        #expect(try await laptop.contents().chores.first?.title == "phone new")
    }

    @Test func clientWinsAndMergePoliciesDecideOnTheServer() async throws {
        let store = try await offPool { try freshServerStore() }
        let merging = ConflictPolicy.merge { server, client in
            // Union of the tags; the client's text.
            guard var merged = client, let server else { return client ?? server }
            guard case .text(let mine)? = client?["tags"], case .text(let theirs)? = server["tags"] else {
                return client
            }
            let tags = Set((mine + "," + theirs).split(separator: ",").map(String.init)).sorted()
            try merged.set("tags", to: tags.joined(separator: ","))
            return merged
        }
        let server = try await offPool {
            try SyncServer(database: store, model: serverModel, policies: ["Memo": merging, "Project": .clientWins])
        }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try TestClient.make(.sqlite, in: directory, server: server, name: "phone").client
        let laptop = try TestClient.make(.lmdb, in: directory, server: server, name: "laptop").client
        let memoID = UUID()
        try await phone.write { context in
            try context.create(Project(id: 1, name: "P"))
            try context.create(Memo(id: memoID, text: "t", tags: "a"))
        }
        _ = try await phone.sync()
        _ = try await laptop.sync()
        try await phone.write { context in
            try context.update(Project(id: 1, name: "phone"))
            try context.update(Memo(id: memoID, text: "phone", tags: "a,b"))
        }
        try await laptop.write { context in
            try context.update(Project(id: 1, name: "laptop"))
            try context.update(Memo(id: memoID, text: "laptop", tags: "a,c"))
        }
        _ = try await phone.sync()
        // Client wins: the project is applied, not reported; the memo is stored merged (the tags of both): reported.
        let rejections = try await laptop.sync().rejections
        #expect(rejections.map(\.entity) == ["Memo"] && rejections.map(\.kind) == [.merged])
        #expect(rejections.first?.serverState.values?["tags"] == .text("a,b,c"))
        _ = try await phone.sync()
        let expected = try await Contents.of(store)
        #expect(expected.projects == [Project(id: 1, name: "laptop")])
        #expect(expected.memos == [Memo(id: memoID, text: "laptop", tags: "a,b,c")])
        #expect(try await phone.contents() == expected)
        #expect(try await laptop.contents() == expected)
    }

    @Test func aLocalChangeToARecordWhoseParentTheServerDeletedIsReportedNotLost() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        let (store, phone, laptop) = (devices.store, devices.phone, devices.laptop)
        try await phone.write { context in
            try context.create(Project(id: 3, name: "Doomed"))
            try context.create(Chore(id: "c", projectID: 3, title: "old", done: false, revision: 1))
        }
        _ = try await phone.sync()
        _ = try await laptop.sync()
        try await laptop.write { _ = try $0.delete(Project.self, id: 3) }
        _ = try await laptop.sync()

        // A change the pull's cascade removes: reported, no longer pending.
        try await phone.write { try $0.update(Chore(id: "c", projectID: 3, title: "edited", done: true, revision: 2)) }
        guard let sqlitePhone = phone as? SyncClient<SQLiteDatabase> else { return }
        let pulled = try await sqlitePhone.pull()
        #expect(pulled.rejections.map(\.key) == [.text("c")], "\(pulled.rejections)")
        #expect(try await phone.pendingCount() == 0)

        // A record created offline under the deleted parent: the server refuses it, and says so.
        try await laptop.write { context in
            try context.create(Project(id: 4, name: "Also doomed"))
        }
        _ = try await laptop.sync()
        _ = try await phone.sync()
        try await laptop.write { _ = try $0.delete(Project.self, id: 4) }
        _ = try await laptop.sync()
        try await sqlitePhone.database.write { context in
            try context.create(Chore(id: "d", projectID: 4, title: "new", done: false, revision: 1))
        }
        let report = try await phone.sync()
        #expect(report.rejections.map(\.key) == [.text("d")], "\(report.rejections)")
        #expect(try await phone.contents() == Contents.of(store))
    }

    @Test func aRecordIsNeverPushedBeforeTheRecordItRefersTo() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let (store, server, directory) = (setup.store, setup.server, setup.directory)
        let phone = try SyncClient(
            database: SQLiteBuilder.client("phone", in: directory).create(), model: clientModel,
            transport: server.directTransport, pushBatchSize: 2)
        try await phone.database.write { try $0.create(Project(id: 1, name: "new")) }
        for id in ["a", "b", "c"] {
            try await phone.database.write {
                try $0.create(Chore(id: id, projectID: 1, title: id, done: false, revision: 1))
            }
        }
        // The project changes again: its pending sequence is now after its chores'.
        try await phone.database.write { try $0.update(Project(id: 1, name: "renamed")) }
        let report = try await phone.sync()
        #expect(report.rejections.isEmpty, "\(report.rejections)")
        #expect(try await Contents.of(store).chores.map(\.id) == ["a", "b", "c"])
        #expect(try await phone.contents() == Contents.of(store))
    }

    /// The outbox is found through its flag (an index every backend answers with an equality): the flag follows each
    /// entry's sequence through writes, acknowledgements, rejections and pulled cascades.
    @Test(arguments: [ClientKind.sqlite, .lmdb, .encryptedLMDB])
    func theOutboxFlagFollowsEveryPendingChange(_ kind: ClientKind) async throws {
        let devices = try await TwoDevices.make(phone: kind, laptop: .sqlite)
        defer { devices.remove() }
        let (phone, laptop) = (devices.phone, devices.laptop)
        try await phone.write { context in
            try context.create(Project(id: 1, name: "One"))
            try context.create(Chore(id: "a", projectID: 1, title: "a", done: false, revision: 1))
        }
        #expect(try await phone.outbox() == [2, 2])
        _ = try await phone.sync()
        #expect(try await phone.outbox() == [0, 0])
        // A change the server doesn't keep (its project was deleted there): reported, no longer pending.
        _ = try await laptop.sync()
        try await laptop.write { _ = try $0.delete(Project.self, id: 1) }
        _ = try await laptop.sync()
        try await phone.write { try $0.update(Chore(id: "a", projectID: 1, title: "b", done: true, revision: 2)) }
        #expect(try await phone.outbox() == [1, 1])
        let report = try await phone.sync()
        #expect(report.rejections.count == 1 && !report.syncedElsewhere, "\(report)")
        #expect(try await phone.outbox() == [0, 0])
        #expect(try await phone.pendingCount() == 0)
    }

    /// A store deleted and made again in its schema starts without the old store's change log and clients.
    @Test func deletingTheServerStoreRemovesItsChangeLog() async throws {
        let schema = "sync_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let builder = try { () throws -> PostgresBuilder in
            var builder = try PostgresBuilder(url: serverURL(), model: serverModel)
            builder.schema = schema
            return builder
        }()
        try await offPool {
            let store = try builder.create()
            _ = try SyncServer(database: store, model: serverModel)
            try store.write { try $0.create(Project(id: 1, name: "gone")) }
            try store.close()
            #expect(try builder.deleteStore())
        }
        let probe = try await offPool { try freshServerStore() }
        let left = try await probe.read { context in
            try context.internalRows(
                "SELECT count(*) FROM pg_catalog.pg_namespace WHERE nspname = $1", [.text(schema)]
            ).first?[0]
        }
        #expect(left == .integer(0), "the schema still holds the sync server's tables or functions")
        let again = try await offPool { try builder.create() }
        let server = try await offPool { try SyncServer(database: again, model: serverModel) }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let phone = try TestClient.make(.sqlite, in: directory, server: server, name: "phone").client
        #expect(try await phone.sync().pulled == 0, "the new store's log held the old store's records")
    }

    /// Pushes that run delete rules are serializable, and concurrent ones would fail each other's serialization
    /// checks: they take turns on the store's push lock.
    @Test func aPushWaitsForTheOneUnderWay() async throws {
        let devices = try await TwoDevices.make(laptop: .sqlite)
        defer { devices.remove() }
        let (store, server, phone) = (devices.store, devices.server, devices.phone)
        try await phone.write { context in
            try context.create(Project(id: 1, name: "stays"))
            try context.create(Project(id: 2, name: "waits its turn"))
        }
        _ = try await phone.sync()
        try await phone.write { _ = try $0.delete(Project.self, id: 2) }
        // Another push's turn, held half a second.
        final class Turn: Sendable {
            let times = Mutex<(began: ContinuousClock.Instant?, ended: ContinuousClock.Instant?)>((nil, nil))
        }
        let turn = Turn()
        let holder = Task {
            try await store.write(takingTurnsOn: server.pushLockKey) { _ in
                turn.times.withLock { $0.began = .now }
                Thread.sleep(forTimeInterval: 0.5)
                turn.times.withLock { $0.ended = .now }
            }
        }
        while turn.times.withLock({ $0.began }) == nil { try await Task.sleep(for: .milliseconds(5)) }
        #expect(try await phone.sync().pushed == 1)
        let pushed = ContinuousClock.now
        try await holder.value
        let ended = try #require(turn.times.withLock { $0.ended })
        #expect(pushed > ended, "the push ran while another held its turn")
        #expect(try await Contents.of(store).projects == [Project(id: 1, name: "stays")])
    }

    @Test func aPushRetriedAfterItsAnswerWasLostAppliesOnce() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let (store, server, directory) = (setup.store, setup.server, setup.directory)
        let lossy = LossyTransport(server: server)
        let builder = SQLiteBuilder.client("phone", in: directory)
        let phone = try SyncClient(database: builder.create(), model: clientModel, transport: lossy)
        try await phone.database.write { context in
            try context.create(Project(id: 1, name: "once"))
        }
        lossy.losesNextAnswer()
        await #expect(throws: PersistenceError.self) { try await phone.sync() }
        #expect(try await phone.pendingCount() == 1, "not acknowledged: still pending")
        // Someone else changes the record on the server in between: applying the retry again would be a conflict.
        try await store.write { try $0.update(Project(id: 1, name: "server")) }
        let report = try await phone.sync()
        #expect(report.rejections.isEmpty, "the retried sequence is recognised, not applied again")
        #expect(try await phone.pendingCount() == 0)
        #expect(try await phone.contents().projects == [Project(id: 1, name: "server")])
    }

    @Test func aSyncedStoreRefusesRawSQLWritesAndKeepsNothingOfThem() throws {
        try withTemporaryDirectory { directory in
            let builder = SQLiteBuilder.client("raw", in: directory)
            let database = try builder.create()
            expectError(.untrackedWrite) {
                try database.write { context in
                    try context.create(Project(id: 1, name: "typed"))
                    try context.execute("INSERT INTO Project (id, name) VALUES (2, 'raw')")
                }
            }
            #expect(try database.read { try $0.count(Project.self) } == 0)
            // A write that throws leaves nothing pending; one that commits is pending in the same transaction.
            struct Failure: Error {}
            #expect(throws: Failure.self) {
                try database.write { context in
                    try context.create(Project(id: 3, name: "rolled back"))
                    throw Failure()
                }
            }
            try database.write { try $0.create(Project(id: 4, name: "kept")) }
            let pending = try database.read { context in
                try context.recover(SyncRecordState.self, query: Query(where: Field("pending") > Int64(0)))
            }
            #expect(pending.map(\.key) == ["i4"], "only the committed write's record is pending")
        }
    }
}

/// The direct transport, except that it can lose a push's answer after the server applied it (a connection lost
/// while the answer was on its way).
final class LossyTransport: SyncTransport, @unchecked Sendable {
    // Guarded by `lock`.
    private var losing = false
    private let lock = NSLock()
    private let server: SyncServer

    init(server: SyncServer) { self.server = server }

    func losesNextAnswer() { lock.withLock { losing = true } }

    func push(_ push: SyncPush) async throws -> SyncPushResult {
        let result = try await server.push(push)
        let lose = lock.withLock {
            defer { losing = false }
            return losing
        }
        if lose { throw PersistenceError(.connectionLost, "the answer was lost") }
        return result
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage { try await server.pull(request) }
}
