import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncHTTP
import PersistenceSyncServer
import Synchronization
import Testing

/// A transport that fails now and then, as a network and a killed app do: a request that never reaches the server
/// (`unreachable`), or an answer lost after the server applied the push or answered the pull (`connectionLost`).
final class FlakyTransport: SyncTransport, Sendable {
    private let inner: any SyncTransport
    private let random: Mutex<SeededGenerator>
    private let failing = Atomic<Bool>(true)

    init(_ inner: any SyncTransport, seed: UInt64) {
        self.inner = inner
        random = Mutex(SeededGenerator(seed: seed))
    }

    /// Stops failing (the schedule's end: every client syncs cleanly).
    func heal() { failing.store(false, ordering: .relaxed) }

    private func roll() -> Int { random.withLock { Int.random(in: 0..<10, using: &$0) } }

    private func run<R>(_ call: () async throws -> R) async throws -> R {
        let roll = failing.load(ordering: .relaxed) ? roll() : 9
        if roll == 0 { throw PersistenceError(.unreachable, "flaky: not sent") }
        let answer = try await call()
        if roll == 1 { throw PersistenceError(.connectionLost, "flaky: answer lost") }
        return answer
    }

    func push(_ push: SyncPush) async throws -> SyncPushResult { try await run { try await inner.push(push) } }
    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        try await run { try await inner.pull(request) }
    }
}

/// A fixed-seed schedule of offline edits, conflicting edits, cascading deletes, server-side writes, lost requests and
/// answers, over three clients (SQLite, LMDB, encrypted LMDB; direct and HTTP transports): at the end every client
/// holds what the server holds, every memo any client created is there (memos are never deleted), and rejections came
/// only from the policies that reject.
@Suite(.timeLimit(.minutes(5)))
struct SyncConvergenceTests {
    @Test(arguments: [UInt64(7), 2026, 31_337, 1, 2])
    func randomSchedulesConverge(seed: UInt64) async throws {
        let store = try await offPool { try freshServerStore() }
        // Projects: server wins (no stamp); chores: newest stamp; memos: client wins.
        let server = try await offPool {
            try SyncServer(
                database: store, model: serverModel, policies: ["Memo": .clientWins],
                scopes: SyncScopeTests.definitions)
        }
        try await withHTTPServer(server) { url in
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let transports = [
                FlakyTransport(server.directTransport, seed: seed &+ 1),
                FlakyTransport(httpTransport(url, token: "admin"), seed: seed &+ 2),
                FlakyTransport(server.directTransport, seed: seed &+ 3),
                FlakyTransport(server.directTransport, seed: seed &+ 4),
            ]
            // The fourth client holds only some projects (and their chores), and changes which as it goes.
            var held: Set<Int64> = [1, 2]
            let scoped = try SyncClient(
                database: SQLiteBuilder.client("scoped", in: directory).create(), model: clientModel,
                transport: transports[3], scopes: Self.scopes(held), pullPageSize: 5)
            let clients: [any TestSyncClient] = try [
                makeClient(SQLiteBuilder.client("sqlite", in: directory), transports[0]),
                makeClient(LMDBBuilder.client("lmdb", in: directory, encrypted: false), transports[1]),
                makeClient(LMDBBuilder.client("encrypted", in: directory, encrypted: true), transports[2]), scoped,
            ]
            var random = SeededGenerator(seed: seed)
            var createdMemos = Set<UUID>()
            var stamp: Int64 = 0
            var rejections: [SyncRejection] = []
            var failedSyncs = 0
            for _ in 0..<240 {
                stamp += 1
                let roll = Int.random(in: 0..<100, using: &random)
                let actor = Int.random(in: 0...clients.count, using: &random)
                if roll < 4 {
                    held = Set((1...6).filter { _ in Bool.random(using: &random) }.map(Int64.init))
                    scoped.subscribe(to: Self.scopes(held))
                    continue
                }
                if roll < 25 {
                    // A sync, which may fail part-way; the next one goes on.
                    guard actor < clients.count else { continue }
                    do {
                        rejections += try await clients[actor].sync().rejections
                    } catch let error as PersistenceError
                        where [.unreachable, .connectionLost].contains(error.code)
                    {
                        failedSyncs += 1
                    }
                    continue
                }
                let edit = Edit.random(using: &random, stamp: stamp)
                // Memos aren't in the scoped client's scopes: its memos are refused (and reported).
                if case .createMemo(let id, _) = edit, actor < clients.count - 1 { createdMemos.insert(id) }
                // An edit that breaks a local rule (a duplicate key, a missing project) is refused locally, as in
                // any app: nothing to sync.
                if actor == clients.count {
                    _ = try? await store.write { try edit.apply(to: $0) }
                } else {
                    try? await clients[actor].write { try edit.apply(to: $0) }
                }
            }
            for transport in transports { transport.heal() }
            for _ in 0..<2 {
                for client in clients { rejections += try await client.sync().rejections }
            }
            let expected = try await Contents.of(store)
            for (index, client) in clients.dropLast().enumerated() {
                let holds = try await client.contents()
                #expect(holds == expected, "client \(index) (seed \(seed)): \(holds) vs server \(expected)")
                #expect(try await client.pendingCount() == 0)
            }
            var inScopes = expected
            inScopes.projects = expected.projects.filter { held.contains($0.id) }
            inScopes.chores = expected.chores.filter { held.contains($0.projectID) }
            inScopes.memos = []
            let scopedHolds = try await scoped.contents()
            #expect(
                scopedHolds == inScopes,
                "scoped client (seed \(seed), \(held.sorted())): \(scopedHolds.projects.map(\.id)), chores \(scopedHolds.chores.map(\.projectID)); server \(expected.projects.map(\.id))"
            )
            #expect(try await scoped.pendingCount() == 0)
            #expect(createdMemos.isSubset(of: Set(expected.memos.map(\.id))), "a created memo was lost")
            #expect(
                !rejections.contains { $0.entity == "Memo" && !$0.reason.contains("scopes") },
                "client wins never rejects")
            #expect(failedSyncs > 0 && !rejections.isEmpty, "the schedule had failures and conflicts")
        }
    }

    /// A project's record and its chores, for each project.
    static func scopes(_ projects: Set<Int64>) -> [SyncScope] {
        projects.sorted().flatMap { [SyncScopeTests.project($0), SyncScopeTests.chores($0)] }
    }

    private func makeClient<B: DatabaseBuilder>(_ builder: B, _ transport: FlakyTransport) throws
        -> any TestSyncClient
    {
        try SyncClient(database: builder.create(), model: clientModel, transport: transport, pullPageSize: 7)
    }
}

/// One random edit, applied to a client's store or to the server's.
enum Edit {
    case createProject(Int64, String)
    case renameProject(Int64, String)
    case deleteProject(Int64)
    case createChore(String, Int64, Int64)
    case editChore(String, Int64, Int64)
    case deleteChore(String)
    case createMemo(UUID, String)
    case editMemo(String)

    static func random(using random: inout SeededGenerator, stamp: Int64) -> Edit {
        let project = Int64.random(in: 1...6, using: &random)
        let chore = "c\(Int.random(in: 1...10, using: &random))"
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .createProject(project, "p\(stamp)")
        case 1: return .renameProject(project, "p\(stamp)")
        case 2:
            return Int.random(in: 0..<3, using: &random) == 0
                ? .deleteProject(project) : .renameProject(project, "r\(stamp)")
        case 3: return .createChore(chore, project, stamp)
        case 4, 5: return .editChore(chore, project, stamp)
        case 6:
            return Int.random(in: 0..<2, using: &random) == 0 ? .deleteChore(chore) : .editChore(chore, project, stamp)
        default:
            return Int.random(in: 0..<2, using: &random) == 0
                ? .createMemo(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012llx", stamp))!, "m\(stamp)")
                : .editMemo("e\(stamp)")
        }
    }

    func apply(to context: some DatabaseContext) throws {
        switch self {
        case .createProject(let id, let name): try context.create(Project(id: id, name: name))
        case .renameProject(let id, let name): try context.update(Project(id: id, name: name))
        case .deleteProject(let id): _ = try context.delete(Project.self, id: id)
        case .createChore(let id, let project, let stamp):
            try context.create(Chore(id: id, projectID: project, title: "t\(stamp)", done: false, revision: stamp))
        case .editChore(let id, let project, let stamp):
            guard var chore = try context.recover(Chore.self, id: id) else { return }
            chore.title = "t\(stamp)"
            chore.done.toggle()
            chore.revision = stamp
            if stamp.isMultiple(of: 5), try context.recover(Project.self, id: project) != nil {
                chore.projectID = project
            }
            try context.update(chore)
        case .deleteChore(let id): _ = try context.delete(Chore.self, id: id)
        case .createMemo(let id, let text): try context.create(Memo(id: id, text: text, tags: ""))
        case .editMemo(let text):
            guard var memo = try context.recover(Memo.self, query: Query(limit: 1)).first else { return }
            memo.text = text
            try context.update(memo)
        }
    }
}
