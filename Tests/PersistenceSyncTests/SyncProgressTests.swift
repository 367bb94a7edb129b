import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Testing

/// A pull's progress: records applied page by page, their bytes, of how many the server counted.
@Suite struct SyncProgressTests {
    /// The latest progress the client published.
    private func latest(_ client: SyncClient<SQLiteDatabase>) async -> SyncProgress? {
        var iterator = client.progress.makeAsyncIterator()
        return await iterator.next() ?? nil
    }

    @Test func aFirstSyncAndThenItsChangesReportHowFarTheyCame() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let writer = try TestClient.make(.sqlite, in: setup.directory, server: setup.server, name: "writer").client
        let ids = (0..<1_234).map { _ in UUID() }
        try await writer.write { context in
            try context.create(Project(id: 1, name: "p"))
            for id in ids { try context.create(Memo(id: id, text: "twelve bytes", tags: "")) }
        }
        _ = try await writer.sync()
        let reader = try SyncClient(
            database: SQLiteBuilder.client("reader", in: setup.directory).create(), model: clientModel,
            transport: setup.server.directTransport, pullPageSize: 100)
        #expect(await latest(reader) == nil)
        let seen = Task { () -> [SyncProgress] in
            var seen: [SyncProgress] = []
            for await progress in reader.progress {
                guard let progress else { continue }
                seen.append(progress)
                if progress.applied == ids.count + 1 { break }
            }
            return seen
        }
        _ = try await reader.sync()
        let steps = await seen.value
        // Each memo: its 16-byte id, 12 bytes of text, no tags; the project: 8 + 1.
        #expect(steps.last == SyncProgress(phase: .wholeScopes, applied: 1_235, bytes: 1_234 * 28 + 9, expected: 1_235))
        #expect(steps.last?.fractionCompleted == 1)
        #expect(steps.map(\.applied) == steps.map(\.applied).sorted() && steps.allSatisfy { $0.expected == 1_235 })
        try await writer.write { context in
            for id in ids.prefix(7) { try context.update(Memo(id: id, text: "changed", tags: "")) }
        }
        _ = try await writer.sync()
        _ = try await reader.sync()
        // The changes since the first sync: the 7, and any record the server's horizon (its oldest running transaction,
        // another test's on a shared server) has the pull read again.
        let changes = try #require(await latest(reader))
        #expect(changes.phase == .changes && changes.applied >= 7 && changes.expected == changes.applied)
    }

    /// Clients of three backends held side by side as `any SyncClientProtocol` and driven through it alone.
    @Test func clientsOfEveryBackendWorkSideBySideThroughTheProtocol() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let transport = setup.server.directTransport
        let sqlite = try SyncClient(
            database: SQLiteBuilder.client("a", in: setup.directory).create(), model: clientModel, transport: transport)
        let lmdb = try SyncClient(
            database: LMDBBuilder.client("b", in: setup.directory, encrypted: false).create(), model: clientModel,
            transport: transport)
        let encrypted = try SyncClient(
            database: LMDBBuilder.client("c", in: setup.directory, encrypted: true).create(), model: clientModel,
            transport: transport)
        try await sqlite.database.write { try $0.create(Project(id: 1, name: "from SQLite")) }
        try await lmdb.database.write { try $0.create(Project(id: 2, name: "from LMDB")) }
        let clients: [any SyncClientProtocol] = [sqlite, lmdb, encrypted]
        for client in clients {
            #expect(try await client.pendingCount() <= 1)
            try await client.sync()
            #expect(try await client.pendingCount() == 0)
        }
        for client in clients { try await client.pull() }
        for client in clients {
            #expect(client.status.description == "idle" && client.scopes == nil)
        }
        #expect(try await encrypted.database.read { try $0.count(Project.self) } == 2)
        #expect(try await sqlite.database.read { try $0.count(Project.self) } == 2)
    }
}
