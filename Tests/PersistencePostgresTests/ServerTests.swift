import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistencePostgres

struct Item: Entity {
    var id: Int64
    var label: String
}

struct Counter: Entity {
    var id: Int64
    var value: Int64
}

/// Runs blocking test code on a thread of its own: the cooperative pool has as few threads as the machine has cores,
/// and tests blocked on a server for seconds would starve the conformance checks' tasks running beside them.
func offPool(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// A builder for a fresh schema of its own on the test server.
func freshBuilder(_ entities: [any Entity.Type], _ prefix: String = "s") throws -> PostgresBuilder {
    var builder = try PostgresBuilder(url: serverURL(), model: Model(version: 1, entities: entities))
    builder.schema = prefix + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
    return builder
}

/// What happens on the server side of many clients: dropped connections, concurrent writers, start-up races.
struct ServerTests {
    @Test func opensWithTypedErrorsThatNeverHoldThePassword() async throws {
        try await offPool(Self.opensWithTypedErrorsThatNeverHoldThePassword)
    }

    static func opensWithTypedErrorsThatNeverHoldThePassword() throws {
        let log = CapturedLog()
        var builder = try freshBuilder([Item.self])
        builder.logger = log.logger()
        builder.username = "secret_user"
        builder.password = "wrong horse"
        let wrong = expectError(.invalidCredentials) { try builder.create() }
        #expect(wrong.map { !"\($0)".contains("wrong horse") } ?? false)
        #expect(!log.text.contains("wrong horse"))

        var missing = try freshBuilder([Item.self])
        missing.database = "no_such_database"
        expectError(.databaseNotFound) { try missing.create() }

        var stopped = try freshBuilder([Item.self])
        stopped.port = 1
        expectError(.unreachable) { try stopped.create() }

        var tls = try freshBuilder([Item.self])
        tls.tls = .require
        expectError(.tlsFailure) { try tls.create() }

        var reserved = try freshBuilder([Item.self])
        reserved.schema = "pg_mine"
        expectError(.invalidConfiguration) { try reserved.create() }
    }

    @Test func refusesIdentifiersPostgreSQLWouldTruncate() async throws {
        try await offPool(Self.refusesIdentifiersPostgreSQLWouldTruncate)
    }

    static func refusesIdentifiersPostgreSQLWouldTruncate() throws {
        struct LongNames: Entity {
            var id: Int64
            var anAttributeWhoseNameIsFarLongerThanSixtyThreeBytesWhichPostgreSQLWouldCut: Int
        }
        expectError(.invalidSchema) { try freshBuilder([LongNames.self]).create() }
    }

    @Test func aConnectionKilledMidTransactionCommitsNothingAndTheNextWriteWorks() async throws {
        try await offPool(Self.aConnectionKilledMidTransactionCommitsNothingAndTheNextWriteWorks)
    }

    static func aConnectionKilledMidTransactionCommitsNothingAndTheNextWriteWorks() throws {
        let builder = try freshBuilder([Item.self])
        let db = try builder.create()
        let killer = try builder.create()
        try db.create(Item(id: 1, label: "before"))
        var runs = 0
        let error = expectError(.connectionLost) {
            try db.write { context in
                runs += 1
                try context.create(Item(id: 2, label: "lost"))
                guard case .integer(let pid)? = try context.scalar("SELECT pg_backend_pid()") else { return }
                try killer.read { try $0.scalar("SELECT pg_terminate_backend($1::int)", [.integer(pid)]) }
                try context.create(Item(id: 3, label: "lost too"))
            }
        }
        #expect(error?.isRetryable == true)
        #expect(runs == 1, "the block ran once")
        #expect(try db.recover(Item.self).map(\.id) == [1], "nothing of the write was committed")
        // A new connection, transparently.
        try db.create(Item(id: 4, label: "after"))
        #expect(try killer.recover(Item.self).map(\.id) == [1, 4])
    }

    @Test func connectionsDroppedBetweenTransactionsAreReplaced() async throws {
        try await offPool(Self.connectionsDroppedBetweenTransactionsAreReplaced)
    }

    static func connectionsDroppedBetweenTransactionsAreReplaced() throws {
        let builder = try freshBuilder([Item.self])
        let db = try builder.create()
        try db.create(Item(id: 1, label: "a"))
        let writer = try db.write { try $0.scalar("SELECT pg_backend_pid()") }
        let reader = try db.read { try $0.scalar("SELECT pg_backend_pid()") }
        let admin = try builder.create()
        for pid in [writer, reader].compactMap({ $0 }) {
            try admin.read { try $0.scalar("SELECT pg_terminate_backend($1::int)", [pid]) }
        }
        usleep(200_000)
        try db.create(Item(id: 2, label: "b"))
        #expect(try db.count(Item.self) == 2)
    }

    @Test func concurrentWritersConflictLoudlyAndRetryOnlyWhenAsked() async throws {
        try await offPool(Self.concurrentWritersConflictLoudlyAndRetryOnlyWhenAsked)
    }

    static func concurrentWritersConflictLoudlyAndRetryOnlyWhenAsked() throws {
        let builder = try freshBuilder([Counter.self])
        let first = try builder.create()
        let second = try builder.create()
        try first.create(Counter(id: 1, value: 0))

        // `first` reads, `second` commits a change to the same record, then `first` writes: a conflict.
        func collide(_ write: (@escaping (PostgresContext) throws -> Void) throws -> Void) throws -> Int {
            var runs = 0
            try write { context in
                runs += 1
                var counter = try #require(try context.recover(Counter.self, id: 1))
                if runs == 1 {
                    let done = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        _ = try? second.write { context in
                            var other = try context.recover(Counter.self, id: 1)
                            other?.value += 100
                            try other.map { try context.update($0) }
                        }
                        done.signal()
                    }
                    done.wait()
                }
                counter.value += 1
                try context.update(counter)
            }
            return runs
        }
        var runs = 0
        let conflict = expectError(.conflict) { runs = try collide { body in try first.write(body) } }
        #expect(conflict?.isRetryable == true)
        #expect(try first.recover(Counter.self, id: 1)?.value == 100, "only the other writer's change")

        runs = try collide { body in try first.write(retryingUpTo: 3, body) }
        #expect(runs == 2, "run again once, after the conflict")
        #expect(try first.recover(Counter.self, id: 1)?.value == 201)
        expectError(.invalidArgument) { try first.write(retryingUpTo: 0) { _ in } }
    }

    @Test func twoProcessesIncrementingOneCounterLoseNothing() async throws {
        try await offPool(Self.twoProcessesIncrementingOneCounterLoseNothing)
    }

    static func twoProcessesIncrementingOneCounterLoseNothing() throws {
        let builder = try freshBuilder([SharedCounterCopy.self])
        try builder.create().create(SharedCounterCopy(id: 1, value: 0))
        let arguments = ["--url", try serverURL(), "--schema", builder.schema, "--count", "1000"]
        let results = try runWorkers([["postgres-increment"] + arguments, ["postgres-increment"] + arguments])
        for result in results {
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.hasPrefix("attempts "))
        }
        #expect(try builder.create().recover(SharedCounterCopy.self, id: 1)?.value == 2000)
    }

    @Test func threeProcessesStartingAtOnceCreateTheStoreOnce() async throws {
        try await offPool(Self.threeProcessesStartingAtOnceCreateTheStoreOnce)
    }

    static func threeProcessesStartingAtOnceCreateTheStoreOnce() throws {
        let builder = try freshBuilder([SharedCounterCopy.self])
        let arguments = ["postgres-open", "--url", try serverURL(), "--schema", builder.schema]
        let results = try runWorkers([arguments, arguments, arguments])
        for result in results {
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output == "opened")
        }
        let db = try builder.create()
        #expect(try db.verify().isSound)
        #expect(try builder.storeNames().contains(builder.schema))
    }

    @Test func eightWritersTimesAThousandMixedOperationsLoseNothing() async throws {
        let builder = try freshBuilder([Item.self])
        _ = try builder.create()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    let db = try builder.create()
                    let base = Int64(writer * 10_000)
                    for step in 0..<1_000 {
                        let id = base + Int64(step / 3)
                        try await db.write(retrying: .collisions(for: .seconds(120))) { context in
                            switch step % 3 {
                            case 0: try context.create(Item(id: id, label: "new \(step)"))
                            case 1: try context.update(Item(id: id, label: "changed \(step)"))
                            default:
                                if id % 2 == 0 { try context.delete(Item.self, id: id) }
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let db = try builder.create()
        var expected: [Int64: String] = [:]
        for writer in 0..<8 {
            let base = Int64(writer * 10_000)
            for step in 0..<1_000 {
                let id = base + Int64(step / 3)
                switch step % 3 {
                case 0: expected[id] = "new \(step)"
                case 1: expected[id] = "changed \(step)"
                default: if id % 2 == 0 { expected[id] = nil }
                }
            }
        }
        let stored = try db.recover(Item.self)
        #expect(stored.count == expected.count)
        #expect(Dictionary(uniqueKeysWithValues: stored.map { ($0.id, $0.label) }) == expected)
    }

    @Test func aStatementPastItsTimeoutIsBusyAndTheDatabaseGoesOn() async throws {
        try await offPool(Self.aStatementPastItsTimeoutIsBusyAndTheDatabaseGoesOn)
    }

    static func aStatementPastItsTimeoutIsBusyAndTheDatabaseGoesOn() throws {
        var builder = try freshBuilder([Item.self])
        builder.statementTimeout = .milliseconds(100)
        let db = try builder.create()
        expectError(.busy) { try db.read { try $0.scalar("SELECT pg_sleep(2)") } }
        try db.create(Item(id: 1, label: "fine"))
        #expect(try db.count(Item.self) == 1)
    }

    @Test func aMissingModelVersionIsDamage() async throws {
        try await offPool(Self.aMissingModelVersionIsDamage)
    }

    /// The same answer as SQLite's and LMDB's for a store without a schema version: `corrupt`, nothing changed.
    static func aMissingModelVersionIsDamage() throws {
        var builder = try freshBuilder([Item.self])
        do {
            let db = try builder.create()
            try db.write {
                try $0.execute("DELETE FROM \"\(builder.schema)\".persistence_metadata WHERE key = 'modelVersion'")
            }
            try db.close()
        }
        for version in [1, 2] {
            builder.model.version = version
            let error = expectError(.corrupt) { try builder.create() }
            #expect(error?.message.contains("no valid schema version") == true, "\(String(describing: error))")
        }
        builder.model.version = 1
        _ = try builder.deleteStore()
    }

    @Test func aFailedRawStatementEndsTheWriteLoudly() async throws {
        try await offPool(Self.aFailedRawStatementEndsTheWriteLoudly)
    }

    static func aFailedRawStatementEndsTheWriteLoudly() throws {
        let db = try freshBuilder([Item.self]).create()
        let error = expectError(.invalidStatement) {
            try db.write { context in
                try context.create(Item(id: 1, label: "kept?"))
                // Swallowed by the block: the server has aborted the transaction all the same.
                _ = try? context.execute("SELEC nonsense")
                try context.create(Item(id: 2, label: "never"))
            }
        }
        #expect(error != nil)
        #expect(try db.count(Item.self) == 0)
        // In a savepoint, the write goes on.
        try db.write { context in
            try context.create(Item(id: 1, label: "kept"))
            _ = try? context.savepoint { try context.execute("SELEC nonsense") }
            try context.create(Item(id: 2, label: "also kept"))
        }
        #expect(try db.count(Item.self) == 2)
    }
}

/// The worker's `SharedCounter`, as the tests see it (same entity name and attributes).
struct SharedCounterCopy: Entity {
    static var entityName: String { "SharedCounter" }
    var id: Int64
    var value: Int64
}

/// Runs `ReliabilityWorker` once per argument list, all at once, and waits for every one.
func runWorkers(_ argumentLists: [[String]]) throws -> [(status: Int32, output: String, errors: String)] {
    let binary = try workerBinary()
    let processes = try argumentLists.map { arguments -> (Process, Pipe, Pipe) in
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return (process, output, errors)
    }
    return processes.map { process, output, errors in
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus,
            String(decoding: out, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
            String(decoding: err, as: UTF8.self)
        )
    }
}

/// `ReliabilityWorker` in the build products directory (SwiftPM builds it first: this test target depends on it).
func workerBinary() throws -> URL {
    let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    for candidate in [directory] + Bundle.allBundles.map({ $0.bundleURL.deletingLastPathComponent() }) {
        let binary = candidate.appendingPathComponent("ReliabilityWorker")
        if FileManager.default.isExecutableFile(atPath: binary.path) { return binary }
    }
    throw PersistenceError(.invalidConfiguration, "ReliabilityWorker was not built next to the tests")
}
