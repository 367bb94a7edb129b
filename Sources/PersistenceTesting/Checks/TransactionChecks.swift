import Foundation
import PersistenceCore
import Testing

/// Transactions: atomic writes, rollback on throw, isolation of readers, context rules.
enum TransactionChecks {
    struct Abort: Error {}

    static let all: [ConformanceCheck] = [
        .database("rolls back every change of a throwing write") { try rollback($0) },
        .database("returns a write's result after commit") { try commitResult($0) },
        .database("shows readers committed data only while a write is open") { try isolation($0) },
        .database("refuses changes in a read transaction") { try readOnly($0) },
        .database("refuses a context used after its block") { try expired($0) },
        .database("refuses a write nested in a write") { try nested($0) },
        .database("runs a write again after a failure that committed nothing, as the retry policy says") {
            try retries($0)
        },
    ]

    static func rollback(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        #expect(throws: Abort.self) {
            try db.write { context in
                try context.create(Person(id: 10, name: "New"))
                try context.update(Person(id: 1, name: "Changed"))
                try context.delete(Person.self, id: 2)
                try context.deleteAll(Tag.self)
                try context.upsert(Tag(id: "t", count: 1))
                #expect(try context.count(Person.self) == 5, "the write sees its own changes")
                throw Abort()
            }
        }
        #expect(try db.recover(Person.self) == QueryChecks.people())
        #expect(try db.count(Tag.self) == 0)
        // A typed error from the engine rolls back the same way.
        expectError(.duplicateKey) {
            try db.write { context in
                try context.create(Person(id: 11, name: "Before"))
                try context.create(Person(id: 1, name: "Duplicate"))
            }
        }
        #expect(try db.recover(Person.self, id: 11) == nil)
    }

    static func commitResult(_ db: some Database) throws {
        let count = try db.write { context -> Int in
            try context.create(Person(id: 1, name: "Ada"))
            try context.create(Person(id: 2, name: "Bob"))
            return try context.count(Person.self)
        }
        #expect(count == 2)
        let names = try db.read { context in try context.recover(Person.self).map(\.name) }
        #expect(names == ["Ada", "Bob"])
    }

    static func isolation(_ db: some Database) throws {
        try db.create(Person(id: 1, name: "Committed"))
        try db.write { context in
            try context.create(Person(id: 2, name: "Uncommitted"))
            try context.update(Person(id: 1, name: "Changed"))
            // A read from this thread, during the write.
            #expect(try db.count(Person.self) == 1)
            #expect(try db.recover(Person.self, id: 1)?.name == "Committed")
            // A read from another thread, during the write.
            let semaphore = DispatchSemaphore(value: 0)
            let seen = Box<[String]>([])
            let failure = Box<String?>(nil)
            Thread.detachNewThread {
                do {
                    seen.value = try db.read { try $0.recover(Person.self).map(\.name) }
                } catch {
                    failure.value = "\(error)"
                }
                semaphore.signal()
            }
            semaphore.wait()
            #expect(failure.value == nil)
            #expect(seen.value == ["Committed"])
        }
        let after: [Person] = try db.recover()
        #expect(after.map(\.name) == ["Changed", "Uncommitted"])
    }

    static func readOnly(_ db: some Database) throws {
        try db.read { context in
            expectError(.readOnly) { try context.create(Person(id: 1, name: "Nope")) }
            expectError(.readOnly) { try context.upsert(Person(id: 1, name: "Nope")) }
            expectError(.readOnly) { try context.update(Person(id: 1, name: "Nope")) }
            expectError(.readOnly) { try context.delete(Person.self, id: 1) }
            expectError(.readOnly) { try context.deleteAll(Person.self) }
        }
        #expect(try db.count(Person.self) == 0)
    }

    static func expired(_ db: some Database) throws {
        let escaped = try db.write { context in context }
        expectError(.contextExpired) { try escaped.create(Person(id: 1, name: "Late")) }
        let escapedReader = try db.read { context in context }
        expectError(.contextExpired) { try escapedReader.count(Person.self) }
        expectError(.contextExpired) { try escapedReader.forEach(Person.self, query: Query()) { _ in } }
        #expect(try db.count(Person.self) == 0)
    }

    static func nested(_ db: some Database) throws {
        try db.write { context in
            try context.create(Person(id: 1, name: "Outer"))
            expectError(.nestedTransaction) { try db.write { try $0.create(Person(id: 2, name: "Inner")) } }
        }
        let all: [Person] = try db.recover()
        #expect(all.map(\.id) == [1])
    }

    static func retries(_ db: some Database) throws {
        let quick = RetryPolicy(maximumAttempts: 4, initialDelay: .zero, maximumDelay: .zero)
        // Each retryable failure rolls its attempt back whole; the next attempt commits.
        for code in [PersistenceError.Code.conflict, .connectionLost, .busy, .unreachable] {
            var runs = 0
            try db.write(retrying: quick) { context in
                runs += 1
                try context.create(Person(id: Int64(100 + runs), name: "attempt \(runs)"))
                if runs < 3 { throw PersistenceError(code, "a failure that committed nothing") }
            }
            #expect(runs == 3, "\(code)")
            #expect(try db.recover(Person.self, sortedBy: [.ascending("id")]).map(\.id) == [103], "\(code)")
            #expect(try db.delete(Person.self, id: 103))
        }
        // Every attempt failing: the last failure is thrown after maximumAttempts runs.
        var runs = 0
        expectError(.conflict) {
            try db.write(retrying: quick) { _ in
                runs += 1
                throw PersistenceError(.conflict, "again")
            }
        }
        #expect(runs == 4)
        // A commit whose outcome is unknown runs again only when the policy says the body is idempotent.
        runs = 0
        expectError(.commitOutcomeUnknown) {
            try db.write(retrying: quick) { _ in
                runs += 1
                throw PersistenceError(.commitOutcomeUnknown, "maybe committed")
            }
        }
        #expect(runs == 1)
        var idempotent = quick
        idempotent.retriesUnknownOutcome = true
        runs = 0
        try db.write(retrying: idempotent) { context in
            runs += 1
            try context.upsert(Person(id: 200, name: "once"))
            if runs == 1 { throw PersistenceError(.commitOutcomeUnknown, "maybe committed") }
        }
        #expect(try runs == 2 && db.count(Person.self) == 1)
        // Any other failure at once; a time limit stops the retries too.
        runs = 0
        expectError(.duplicateKey) {
            try db.write(retrying: quick) { context in
                runs += 1
                try context.create(Person(id: 200, name: "twice"))
            }
        }
        #expect(runs == 1)
        // The first failure comes well within 2 s, the second after the 2.5 s wait: exactly one retry, however busy
        // the machine (a 50 ms budget with 30 ms waits gave 1 run when the first attempt alone took 50 ms).
        let brief = RetryPolicy(
            initialDelay: .milliseconds(2_500), maximumDelay: .seconds(3), jitter: 0, maximumDuration: .seconds(2))
        runs = 0
        expectError(.busy) {
            try db.write(retrying: brief) { _ in
                runs += 1
                throw PersistenceError(.busy, "locked")
            }
        }
        #expect(runs == 2, "attempts start until 2 s have passed: \(runs)")
        // Settings out of range are refused before the body runs.
        for policy in [
            RetryPolicy(maximumAttempts: 0), RetryPolicy(multiplier: 0.5), RetryPolicy(jitter: 2),
            RetryPolicy(initialDelay: .seconds(-1)), RetryPolicy(maximumDuration: .seconds(-1)),
        ] {
            expectError(.invalidArgument) { try db.write(retrying: policy) { _ in Issue.record("ran") } }
        }
    }
}

/// A mutable box for results handed across threads in checks; each is written once before a semaphore signal
/// and read after the wait.
final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }

}
