import Foundation
import PersistenceCore
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
}
