import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceSync
import PersistenceSyncServer
import Synchronization
import Testing

/// A link that drops any page carrying more than `limit` bytes of values before it arrives (its transfer would outlast
/// the connection), counting the bytes of the pages that did arrive.
private final class ShortLivedLink: SyncTransport, Sendable {
    let inner: any SyncTransport
    let limit: Int
    /// Bytes of values that arrived in the pages of the first sync's snapshot (a pull of the store's records).
    let arrived = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)

    init(_ inner: any SyncTransport, limit: Int) {
        self.inner = inner
        self.limit = limit
    }

    func push(_ push: SyncPush) async throws -> SyncPushResult { try await inner.push(push) }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullPage {
        let page = try await inner.pull(request)
        let bytes = page.changes.reduce(0) { $0 + ($1.values?.values.reduce(0) { $0 + $1.byteCount } ?? 0) }
        guard bytes <= limit else {
            dropped.add(1, ordering: .relaxed)
            throw PersistenceError(.connectionLost, "the link dropped")
        }
        if request.isSnapshot { arrived.add(bytes, ordering: .relaxed) }
        return page
    }
}

extension Value {
    fileprivate var byteCount: Int {
        switch self {
        case .null: 0
        case .integer, .real: 8
        case .text(let text): text.utf8.count
        case .blob(let data): data.count
        }
    }
}

/// Pull pages paced to the link: sized by how fast pages arrive, smaller after a dropped connection.
@Suite(.timeLimit(.minutes(5)))
struct SyncPacingTests {
    @Test func theBudgetFollowsTheLinkWithinItsBounds() {
        let pacing = SyncPullPacing(ceiling: 4 << 20)
        #expect(pacing.bytes == 1 << 20)
        #expect(pacing.pageSize(maximum: 10_000) == 1_000, "the first page, weight unknown")
        // 1 MiB in a second: 256 KiB fit the quarter-second target, but a page halves at most at once.
        pacing.arrived(bytes: 1 << 20, changes: 1_024, in: .seconds(1))
        #expect(pacing.bytes == 512 << 10)
        #expect(pacing.pageSize(maximum: 10_000) == 512, "512 KiB at 1 KiB a change")
        pacing.arrived(bytes: 1 << 20, changes: 1_024, in: .seconds(1))
        #expect(pacing.bytes == 256 << 10)
        // A fast link: doubling at most, up to the ceiling.
        for _ in 0..<10 { pacing.arrived(bytes: 1 << 20, changes: 1_024, in: .milliseconds(10)) }
        #expect(pacing.bytes == 4 << 20)
        #expect(pacing.pageSize(maximum: 3_000) == 3_000, "never more than the client's page size")
        // A lost connection quarters it, down to the floor; the first page of the next pull too.
        pacing.lost()
        #expect(pacing.bytes == 1 << 20)
        for _ in 0..<10 { pacing.lost() }
        #expect(pacing.bytes == SyncPullPacing.floor)
        #expect(pacing.pageSize(maximum: 10_000) == 64)
        let fresh = SyncPullPacing(ceiling: 4 << 20)
        fresh.lost()
        #expect(fresh.pageSize(maximum: 10_000) == 250)
    }

    /// Pages of 1,000 changes of 1 KiB never arrive over a link that drops anything above 96 KiB; the pull shrinks
    /// its pages after each drop and finishes, re-pulling no page it applied.
    @Test func aPullOverALinkThatDropsLargePagesFinishes() async throws {
        let setup = try await ServerAndFolder.make()
        defer { setup.remove() }
        let text = String(repeating: "x", count: 1_008)
        try await setup.store.write { context in
            for chunk in (0..<3_000).map({ _ in UUID() }).chunks(of: 500) {
                try context.create(chunk.map { Memo(id: $0, text: text, tags: "") })
            }
        }
        let link = ShortLivedLink(setup.server.directTransport, limit: 96 << 10)
        let client = try SyncClient(
            database: SQLiteBuilder.client("phone", in: setup.directory).create(), model: clientModel,
            transport: link)
        var attempts = 0
        while true {
            attempts += 1
            do {
                try await client.pull()
                break
            } catch let error as PersistenceError where error.code == .connectionLost && attempts < 60 {}
        }
        #expect(try await client.contents().memos.count == 3_000)
        // Every page of the snapshot that arrived was applied once: what arrived is the records' bytes, no more. (The
        // changes since the snapshot's horizon follow it; a long transaction elsewhere on the server — another test's —
        // holds the horizon back, and those changes are the same records again: not counted.)
        #expect(link.arrived.load(ordering: .relaxed) == 3_000 * (16 + 1_008))
        #expect(link.dropped.load(ordering: .relaxed) >= 1 && attempts <= 40, "\(attempts) pulls")
    }
}

extension Array {
    fileprivate func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
