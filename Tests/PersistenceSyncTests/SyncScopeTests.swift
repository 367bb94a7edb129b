import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Testing

/// Partial sync: scopes, what a client may read and write, records leaving a scope; tombstones purged; model versions.
@Suite(.timeLimit(.minutes(5)))
struct SyncScopeTests {
    static let definitions = [
        SyncScopeDefinition("project", of: Project.self) { Field("id") == ($0["id"] ?? .null) },
        SyncScopeDefinition("chores", of: Chore.self) { Field("projectID") == ($0["project"] ?? .null) },
    ]

    static func project(_ id: Int64) -> SyncScope { SyncScope("project", ["id": .integer(id)]) }
    static func chores(_ project: Int64) -> SyncScope { SyncScope("chores", ["project": .integer(project)]) }

    /// A new server store and its sync server, with the scopes above.
    static func scopedServer() async throws -> (PostgresDatabase, SyncServer) {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool {
            try SyncServer(database: store, model: serverModel, scopes: Self.definitions)
        }
        return (store, server)
    }

    /// A server store with two projects and a chore in each, written on the server.
    static func seededServer() async throws -> (PostgresDatabase, SyncServer) {
        let (store, server) = try await scopedServer()
        try await store.write { context in
            try context.create([Project(id: 1, name: "One"), Project(id: 2, name: "Two")])
            try context.create(Chore(id: "a", projectID: 1, title: "A", done: false, revision: 1))
            try context.create(Chore(id: "b", projectID: 2, title: "B", done: false, revision: 1))
        }
        return (store, server)
    }

    private func client(
        _ server: SyncServer, _ directory: URL, scopes: [SyncScope]?, access: SyncAccess = .everything,
        name: String = "client", model: Model = clientModel
    ) throws -> SyncClient<SQLiteDatabase> {
        let builder = SQLiteBuilder.client(name, in: directory, model: model)
        return try SyncClient(
            database: builder.create(), model: model, transport: DirectSyncTransport(server: server, access: access),
            scopes: scopes)
    }

    @Test func aClientHoldsOnlyItsScopesAndLosesRecordsThatLeaveThem() async throws {
        let (store, server) = try await Self.seededServer()
        try await withDirectory { directory in
            let phone = try client(server, directory, scopes: [Self.project(1), Self.chores(1)])
            try await phone.sync()
            var held = try await phone.contents()
            #expect(held.projects.map(\.id) == [1] && held.chores.map(\.id) == ["a"])

            // The chore moves to the other project on the server: it leaves the phone's scopes.
            try await store.write { try $0.update(Chore(id: "a", projectID: 2, title: "A", done: false, revision: 2)) }
            try await phone.sync()
            held = try await phone.contents()
            #expect(held.chores.isEmpty)

            // Scopes added: their records arrive, and later changes to them too.
            phone.subscribe(to: [Self.project(1), Self.chores(1), Self.project(2), Self.chores(2)])
            try await phone.sync()
            #expect(try await phone.contents().chores.map(\.id) == ["a", "b"])
            try await store.write { try $0.update(Chore(id: "b", projectID: 2, title: "B2", done: true, revision: 2)) }
            try await phone.sync()
            #expect(try await phone.contents().chores.last?.title == "B2")

            // A scope dropped: its records go, unless they have changes not yet pushed... which the sync pushes first.
            phone.subscribe(to: [Self.project(1), Self.chores(1)])
            try await phone.sync()
            held = try await phone.contents()
            #expect(held.projects.map(\.id) == [1] && held.chores.isEmpty)
        }
    }

    @Test func aPulledRecordWhoseParentIsOutsideTheScopesStopsThePullLoudly() async throws {
        let (_, server) = try await Self.seededServer()
        try await withDirectory { directory in
            let phone = try client(server, directory, scopes: [Self.project(1), Self.chores(2)])
            do {
                try await phone.sync()
                Issue.record("a chore without its project was pulled")
            } catch let error as PersistenceError {
                #expect(error.code == .referenceNotFound)
                #expect("\(error)".contains("scope"), "\(error)")
            }
            #expect(try await phone.contents().chores.isEmpty, "nothing of the page was applied")
        }
    }

    @Test func aChangeOutsideTheClientsScopesIsRejectedAndUndoneLocally() async throws {
        let (store, server) = try await Self.seededServer()
        try await withDirectory { directory in
            let scopes = [Self.project(1), Self.chores(1)]
            let phone = try client(server, directory, scopes: scopes, access: .only(Set(scopes)))
            try await phone.sync()
            try await phone.write { context in
                try context.create(Project(id: 3, name: "not mine"))
                try context.update(Project(id: 1, name: "One, renamed"))
            }
            let report = try await phone.sync()
            #expect(report.rejections.map(\.key) == [.integer(3)])
            #expect(report.rejections.first?.reason.contains("scopes") == true)
            let server = try await Contents.of(store)
            #expect(server.projects.map(\.name) == ["One, renamed", "Two"])
            let held = try await phone.contents()
            #expect(held.projects.map(\.id) == [1], "the refused record is gone locally")
        }
    }

    @Test func aScopeTheClientMayNotSyncIsRefused() async throws {
        let (_, server) = try await Self.seededServer()
        try await withDirectory { directory in
            let phone = try client(
                server, directory, scopes: [Self.project(2)], access: .only([Self.project(1)]))
            try await phone.write { try $0.create(Project(id: 9, name: "offline")) }
            await #expect(throws: PersistenceError.self) { try await phone.sync() }
            do {
                try await phone.sync()
            } catch let error as PersistenceError {
                #expect(error.code == .unauthorized)
            }
            #expect(try await phone.pendingCount() == 1, "nothing local is lost")
            // Without scopes a client asks for the whole store, which only trusted clients may.
            let whole = try client(server, directory, scopes: nil, access: .only([Self.project(1)]), name: "whole")
            await #expect(throws: PersistenceError.self) { try await whole.sync() }
        }
    }

    @Test func aClientOfflineForLongerThanDeletionsAreKeptResyncs() async throws {
        let (store, server) = try await Self.seededServer()
        try await withDirectory { directory in
            let phone = try client(server, directory, scopes: nil, name: "phone")
            let laptop = try client(server, directory, scopes: nil, name: "laptop")
            try await phone.sync()
            try await laptop.sync()
            try await laptop.write { context in
                _ = try context.delete(Chore.self, id: "a")
                try context.create(Project(id: 3, name: "Three"))
            }
            try await laptop.sync()
            try await phone.write { try $0.update(Project(id: 2, name: "Two (phone, offline)")) }
            #expect(try await server.purgeTombstones(olderThan: .zero) == 1)
            // The phone's cursor is older than the purged deletion: it resyncs, keeping its own pending change.
            try await phone.sync()
            let expected = try await Contents.of(store)
            #expect(expected.chores.map(\.id) == ["b"])
            #expect(expected.projects.map(\.name) == ["One", "Two (phone, offline)", "Three"])
            #expect(try await phone.contents() == expected)
            try await laptop.sync()
            #expect(try await laptop.contents() == expected)
        }
    }

    @Test func aClientOfAnOlderModelIsToldToUpdateAndKeepsItsChanges() async throws {
        let newer = Model(version: 2, entities: serverModel.entities)
        let store = try await offPool { try freshServerStore(newer) }
        let server = try await offPool { try SyncServer(database: store, model: newer) }
        try await withDirectory { directory in
            let phone = try client(server, directory, scopes: nil)
            try await phone.write { try $0.create(Project(id: 1, name: "kept")) }
            do {
                try await phone.sync()
                Issue.record("an older client synced")
            } catch let error as PersistenceError {
                #expect(error.code == .updateRequired)
            }
            #expect(try await phone.pendingCount() == 1)
            // The updated app (same store, newer model) syncs what was pending.
            let updated = try client(server, directory, scopes: nil, model: newer.synced())
            try await updated.sync()
            #expect(try await Contents.of(store).projects == [Project(id: 1, name: "kept")])
        }
    }

    private func withDirectory(_ body: (URL) async throws -> Void) async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await body(directory)
    }
}
