import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceTestProcesses
import PersistenceTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The retry helper against a real restart: `pg_ctl restart -m fast` in the middle of a write loop.
@Suite(.serialized)
struct RestartTests {
    @Test(.timeLimit(.minutes(3)))
    func aRestartDuringAWriteLoopFailsNoWriteAndDuplicatesNothingThroughTheRetryHelper() async throws {
        try await offPool(Self.restartDuringAWriteLoop)
    }

    static func restartDuringAWriteLoop() throws {
        let server = try OwnServer()
        defer { server.stop() }
        var builder = try PostgresBuilder(url: server.url, model: Model(entities: [Item.self]))
        builder.schema = "restart"
        let db = try builder.create()
        defer { try? db.close() }
        // Another app server on the store, which only observes: its listening connection drops with the restart.
        let observer = try builder.create()
        defer { try? observer.close() }
        let started = try db.read { try $0.scalar("SELECT pg_postmaster_start_time()::text") }
        // Upserts of the loop's own keys are idempotent: a write whose commit outcome is unknown may run again.
        var policy = RetryPolicy(maximumAttempts: 1_000, maximumDuration: .seconds(60))
        policy.retriesUnknownOutcome = true

        let clock = ContinuousClock()
        var longest = Duration.zero
        var written: Int64 = 0
        var runs = 0
        var restart: Process?
        var writtenAfterRestart = 0
        // Writes go on through the restart, and 50 more after it ended.
        while writtenAfterRestart < 50, written < 1_000_000 {
            let id = written
            let began = clock.now
            try db.write(retrying: policy) { context in
                runs += 1
                try context.upsert(Item(id: id, label: "item \(id)"))
            }
            longest = max(longest, clock.now - began)
            written += 1
            if written == 50 { restart = try server.restart() }
            if let restart, !restart.isRunning { writtenAfterRestart += 1 }
        }
        restart?.waitUntilExit()
        #expect(restart?.terminationStatus == 0)
        // The server did restart under the loop.
        #expect(try db.read { try $0.scalar("SELECT pg_postmaster_start_time()::text") } != started)
        // Every write is there exactly once, as written.
        let items = try db.recover(Item.self, sortedBy: [.ascending("id")])
        #expect(items.count == Int(written))
        #expect(
            items.enumerated().allSatisfy {
                $0.element.id == Int64($0.offset) && $0.element.label == "item \($0.offset)"
            })
        #expect(runs >= Int(written))
        // Some write waited out the server's downtime — dropped, refused, then "starting up" — retrying until it was
        // back: far longer than a write takes, or than the waits of five collision retries (≤ 15 ms) add up to.
        #expect(longest >= .milliseconds(100), "the longest write took \(longest)")

        // The observer's listener reconnected by itself, and hears the writer's commits again.
        _ = try observer.checkForExternalChanges()
        try db.write(retrying: policy) { try $0.upsert(Item(id: -1, label: "after the restart")) }
        #expect(try observer.checkForExternalChanges() == true, "the observer no longer hears the writer")
    }
}
