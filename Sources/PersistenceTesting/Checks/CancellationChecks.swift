import Foundation
import PersistenceCore
import Synchronization
import Testing

/// Cancelling the task that awaits an async transaction.
enum CancellationChecks {
    static let all: [ConformanceCheck] = [
        .database("never runs a write whose task was cancelled before it began") { try await before($0) },
        .database("rolls back a write whose task is cancelled while it runs") { try await during($0) },
        .database("stops a long iteration when its task is cancelled") { try await iteration($0) },
        .database("stops a long batch write when its task is cancelled") { try await batch($0) },
        .database("never reports a committed write as cancelled") { try await afterCommit($0) },
    ]

    /// A flag set from one thread and awaited on another.
    final class Signal: Sendable {
        private let value = Atomic<Bool>(false)
        func raise() { value.store(true, ordering: .releasing) }
        var isRaised: Bool { value.load(ordering: .acquiring) }

        /// Waits (polling) until raised; records an issue after 30 s.
        func wait() async {
            for _ in 0..<30_000 {
                if isRaised { return }
                try? await Task.sleep(nanoseconds: 1_000_000)
            }
            Issue.record("the signal was never raised")
        }

        /// Blocks the calling (non-async) thread until `condition` holds, up to 30 s.
        static func block(until condition: () -> Bool) {
            for _ in 0..<30_000 {
                if condition() { return }
                usleep(1_000)
            }
            Issue.record("the condition never held")
        }
    }

    static func before(_ db: some Database) async throws {
        let ran = Signal()
        let task = Task {
            // Cancelled before the write is asked for: the block must not run.
            while !Task.isCancelled { await Task.yield() }
            try await db.write { context in
                ran.raise()
                try context.create(Person(id: 1, name: "Never"))
            }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isRaised)
        #expect(try db.count(Person.self) == 0)
    }

    static func during(_ db: some Database) async throws {
        let started = Signal()
        let task = Task {
            try await db.write { context in
                try context.create((0..<200).map { Person(id: Int64($0), name: "Row \($0)") })
                started.raise()
                // The block returns normally once the task is cancelled: the check before the commit refuses it.
                Signal.block { context.isCancelled }
            }
        }
        await started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try db.count(Person.self) == 0, "a cancelled write committed")
        // The database is not left in a transaction: the next write works.
        try await db.write { context in try context.create(Person(id: 1, name: "After")) }
        #expect(try db.count(Person.self) == 1)
    }

    static func iteration(_ db: some Database) async throws {
        let total = 2_000
        try db.create((0..<total).map { Person(id: Int64($0), name: "Row \($0)") })
        let started = Signal()
        let seen = Atomic<Int>(0)
        let task = Task {
            try await db.read { context in
                try context.forEach(Person.self) { _ in
                    if seen.add(1, ordering: .relaxed).newValue == 1 {
                        started.raise()
                        Signal.block { context.isCancelled }
                    }
                }
            }
        }
        await started.wait()
        task.cancel()
        // forEach itself notices between records, without the body checking.
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(seen.load(ordering: .relaxed) < total)
    }

    static func batch(_ db: some Database) async throws {
        let started = Signal()
        let task = Task {
            try await db.write { context in
                let people = (0..<5_000).lazy.map { index -> Person in
                    if index == 10 {
                        started.raise()
                        Signal.block { context.isCancelled }
                    }
                    return Person(id: Int64(index), name: "Row \(index)")
                }
                try context.create(people)
            }
        }
        await started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try db.count(Person.self) == 0)
    }

    static func afterCommit(_ db: some Database) async throws {
        let task = Task { () async throws -> Int in
            try await db.write { context in
                try context.create(Person(id: 1, name: "Committed"))
                return 42
            }
        }
        // Cancel once the write is visible as committed: its result must still arrive.
        while try db.count(Person.self) == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        task.cancel()
        #expect(try await task.value == 42)
        #expect(try db.recover(Person.self, id: 1)?.name == "Committed")
    }
}
