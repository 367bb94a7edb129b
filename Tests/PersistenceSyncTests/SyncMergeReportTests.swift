import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Testing

/// A merge policy's result that isn't what the client pushed comes back as a `merged` rejection carrying what the
/// server stored — in the sync's report and on the rejections stream — and the local store takes it.
@Suite(.timeLimit(.minutes(5)))
struct SyncMergeReportTests {
    /// The server's text wins, tags are the union; a deletion on the client is undone (the server keeps the record).
    static let policy = ConflictPolicy.merge { server, client in
        guard let server else { return client }
        guard let client else { return server }
        var merged = server
        guard case .text(let mine)? = client["tags"], case .text(let theirs)? = server["tags"] else { return client }
        let tags = Set((mine + "," + theirs).split(separator: ",").map(String.init)).sorted()
        try merged.set("tags", to: tags.joined(separator: ","))
        return merged
    }

    /// A server with the merge policy on memos, a phone that synced `memo`, and the server's own change to it since.
    private func conflicted(_ memo: Memo, serverChange: Memo) async throws -> (
        ServerAndFolder, SyncClient<SQLiteDatabase>
    ) {
        let store = try await offPool { try freshServerStore() }
        let server = try await offPool {
            try SyncServer(database: store, model: serverModel, policies: ["Memo": Self.policy])
        }
        let setup = ServerAndFolder(store: store, server: server, directory: try temporaryDirectory())
        let phone = try SyncClient(
            database: SQLiteBuilder.client("phone", in: setup.directory).create(), model: clientModel,
            transport: server.directTransport)
        try await store.write { try $0.create(memo) }
        _ = try await phone.sync()
        try await store.write { try $0.update(serverChange) }
        return (setup, phone)
    }

    @Test func aMergeThatStoresOtherValuesIsReportedWithWhatWasStored() async throws {
        let id = UUID()
        let (setup, phone) = try await conflicted(
            Memo(id: id, text: "t", tags: "a"), serverChange: Memo(id: id, text: "server", tags: "a,s"))
        defer { setup.remove() }
        let rejections = phone.rejections
        try await phone.database.write { try $0.update(Memo(id: id, text: "phone", tags: "a,p")) }
        let report = try await phone.sync()

        #expect(report.pushed == 1)
        let merged = try #require(report.rejections.first)
        #expect(report.rejections.count == 1)
        #expect(merged.kind == .merged)
        #expect(merged.entity == "Memo")
        #expect(merged.serverState.values?["text"] == .text("server"))
        #expect(merged.serverState.values?["tags"] == .text("a,p,s"))
        let stored = Memo(id: id, text: "server", tags: "a,p,s")
        #expect(try await Contents.of(setup.store).memos == [stored])
        #expect(try await phone.contents().memos == [stored], "the phone holds what the server stored")
        var heard = rejections.makeAsyncIterator()
        #expect(await heard.next() == merged, "the rejections stream hears of the merge too")
        #expect(try await phone.pendingCount() == 0)
    }

    @Test func aDeletionTheMergeUndidIsReported() async throws {
        let id = UUID()
        let (setup, phone) = try await conflicted(
            Memo(id: id, text: "t", tags: "a"), serverChange: Memo(id: id, text: "kept", tags: "a"))
        defer { setup.remove() }
        try await phone.database.write { _ = try $0.delete(Memo.self, id: id) }
        let report = try await phone.sync()

        let merged = try #require(report.rejections.first)
        #expect(merged.kind == .merged)
        #expect(!merged.serverState.isDeletion, "the server kept the record")
        #expect(try await phone.contents().memos == [Memo(id: id, text: "kept", tags: "a")], "the record is back")
    }

    @Test func aMergeThatKeepsWhatWasPushedIsNoRejection() async throws {
        let id = UUID()
        let (setup, phone) = try await conflicted(
            Memo(id: id, text: "t", tags: "a"), serverChange: Memo(id: id, text: "server", tags: "a"))
        defer { setup.remove() }
        // The server's text and the union of the tags: exactly what the phone pushes.
        try await phone.database.write { try $0.update(Memo(id: id, text: "server", tags: "a,b")) }
        let report = try await phone.sync()
        #expect(report.pushed == 1)
        #expect(report.rejections.isEmpty)
        #expect(try await Contents.of(setup.store).memos == [Memo(id: id, text: "server", tags: "a,b")])
    }

    @Test func aRejectionSaysItWasRejected() async throws {
        let devices = try await TwoDevices.make(laptop: .lmdb)
        defer { devices.remove() }
        try await devices.phone.write { try $0.create(Project(id: 1, name: "first")) }
        _ = try await devices.phone.sync()
        try await devices.store.write { try $0.update(Project(id: 1, name: "server")) }
        try await devices.phone.write { try $0.update(Project(id: 1, name: "phone")) }
        let report = try await devices.phone.sync()
        #expect(report.rejections.map(\.kind) == [.rejected], "projects: the server wins")
    }
}
