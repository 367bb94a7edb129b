import Foundation
import PersistenceCore
import PersistenceTesting
import Synchronization
import Testing

@testable import PersistencePostgres

/// One database serving many request handlers: its writes run at once (as many as its pool size), each on its own
/// connection, and observers still hear of them in commit order.
struct ConcurrentWriteTests {
    /// Counts the write blocks running at once, and lets each wait until `expected` of them are inside together.
    final class Meeting: Sendable {
        private let state = Mutex((inside: 0, peak: 0, arrived: 0))
        let expected: Int

        init(expected: Int) { self.expected = expected }

        var peak: Int { state.withLock { $0.peak } }

        /// Called inside a write block: returns once `expected` blocks have arrived, or `false` after 20 s.
        func meet() -> Bool {
            state.withLock { state in
                state.inside += 1
                state.arrived += 1
                state.peak = max(state.peak, state.inside)
            }
            defer { state.withLock { $0.inside -= 1 } }
            let deadline = Date().addingTimeInterval(20)
            while state.withLock({ $0.arrived < expected }) {
                guard Date() < deadline else { return false }
                usleep(1_000)
            }
            return true
        }

        /// Called inside a write block: notes it, holds it a moment so that others may overlap, and leaves.
        func pass() {
            state.withLock { state in
                state.inside += 1
                state.peak = max(state.peak, state.inside)
            }
            usleep(20_000)
            state.withLock { $0.inside -= 1 }
        }
    }

    @Test func asyncWritesOfOneDatabaseRunAtOnceUpToItsPoolSize() async throws {
        var builder = try freshBuilder([Item.self])
        builder.poolSize = 4
        let db = try builder.create()
        defer { try? db.close() }
        // Four writes that each wait inside their transaction for the other three: they can only all finish if the
        // four transactions are open at the same time.
        let meeting = Meeting(expected: 4)
        let met = try await withThrowingTaskGroup(of: Bool.self) { group in
            for id in 1...4 {
                group.addTask {
                    try await db.write { context in
                        try context.create(Item(id: Int64(id), label: "request \(id)"))
                        return meeting.meet()
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(met == [true, true, true, true], "four writes were never open at once")
        #expect(try db.count(Item.self) == 4)

        // Twelve at once on a pool of four: never more than four transactions.
        let crowd = Meeting(expected: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 5...16 {
                group.addTask {
                    try await db.write { context in
                        try context.create(Item(id: Int64(id), label: "crowd"))
                        crowd.pass()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(crowd.peak <= 4)
        #expect(crowd.peak >= 2, "the writes never overlapped")
        #expect(try db.count(Item.self) == 16)
    }

    @Test func syncWritesFromSeveralThreadsRunAtOnceAndNestedOnesAreRefused() async throws {
        try await offPool {
            var builder = try freshBuilder([Item.self])
            builder.poolSize = 3
            let db = try builder.create()
            defer { try? db.close() }
            let meeting = Meeting(expected: 3)
            let outcomes = Mutex<[Bool]>([])
            let done = DispatchGroup()
            for id in 1...3 {
                done.enter()
                Thread.detachNewThread {
                    defer { done.leave() }
                    let met = try? db.write { context in
                        try context.create(Item(id: Int64(id), label: "thread \(id)"))
                        return meeting.meet()
                    }
                    outcomes.withLock { $0.append(met ?? false) }
                }
            }
            done.wait()
            #expect(outcomes.withLock { $0 } == [true, true, true])
            // A write inside a write on the same thread would wait for locks the outer one holds: refused, and the
            // outer write commits.
            try db.write { context in
                try context.create(Item(id: 4, label: "outer"))
                expectError(.nestedTransaction) { try db.write { try $0.create(Item(id: 5, label: "inner")) } }
                // A read inside a write is fine: it runs on a reader.
                #expect(try db.read { try $0.count(Item.self) } == 3)
            }
            #expect(try db.count(Item.self) == 4)
        }
    }

    /// Each key is inserted by one commit and deleted by a later one of the same task (which begins after the first
    /// committed), while 16 tasks do the same at once: the change sets must arrive with every insertion before its
    /// deletion, although the commits ran on 16 connections.
    @Test func observersHearConcurrentCommitsInCommitOrder() async throws {
        var builder = try freshBuilder([Item.self])
        builder.poolSize = 16
        let db = try builder.create()
        defer { try? db.close() }
        let tasks = 16
        let rounds = 15
        // Conflicts between the tasks, and refusals while other tests' long writes run on the same server.
        let colliding = RetryPolicy.collisions(for: .seconds(120))
        // Listening before the observation starts: the listener's first "read again" isn't among the change sets.
        _ = try db.checkForExternalChanges()
        let changes = db.changes(of: Item.self)
        let listening = Task {
            var state: [Int64: Bool] = [:]
            var problems: [String] = []
            var deletions = 0
            for await change in changes {
                #expect(change.isComplete)
                for id in change.inserted {
                    if state[id] != nil { problems.append("\(id) inserted twice") }
                    state[id] = true
                }
                for id in change.deleted {
                    if state[id] != true { problems.append("\(id) deleted before it was inserted") }
                    state[id] = false
                    deletions += 1
                }
                if deletions == tasks * rounds { break }
            }
            return problems
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for round in 0..<rounds {
                        let id = Int64(task * 1_000 + round)
                        try await db.write(retrying: colliding) { try $0.create(Item(id: id, label: "new")) }
                        try await db.write(retrying: colliding) { _ = try $0.delete(Item.self, id: id) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let problems = await listening.value
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(try db.count(Item.self) == 0)
    }

    /// The sync server's pushes take turns on an advisory lock: taken before each transaction begins, so each one's
    /// snapshot holds every earlier turn's commit and none fails another's serialization check.
    @Test func writesTakingTurnsOnOneKeyRunOneAtATimeAndSeeEachOthersCommits() async throws {
        var builder = try freshBuilder([Item.self])
        builder.poolSize = 4
        let db = try builder.create()
        defer { try? db.close() }
        let meeting = Meeting(expected: 4)
        let seen = try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 1...4 {
                group.addTask {
                    try await db.write(takingTurnsOn: 42) { context in
                        let before = try context.count(Item.self)
                        meeting.pass()
                        try context.create(Item(id: Int64(id), label: "turn \(id)"))
                        return before
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(meeting.peak == 1, "writes under one key overlapped")
        // Had the lock been taken inside the transaction, its snapshot would predate the wait: every turn would see 0.
        #expect(seen.sorted() == [0, 1, 2, 3])
        #expect(try db.count(Item.self) == 4)
        // The lock is released after each turn: another key's write and the same key's next one go through.
        try await db.write(takingTurnsOn: 7) { try $0.create(Item(id: 5, label: "other key")) }
        try await db.write(takingTurnsOn: 42) { try $0.create(Item(id: 6, label: "same key, later")) }
        #expect(try db.count(Item.self) == 6)
    }
}
