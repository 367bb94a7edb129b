import Foundation
import PersistencePostgres
import PostgresNIO
import Synchronization

/// P7: commits per second of small write transactions from several writers at once on one store — a task per writer,
/// as a server's request handlers are: raw gives each its own connection; ours runs them all on **one**
/// `PostgresDatabase` whose pool size is the writer count (its async API, each write on a connection of the pool).
/// Each transaction upserts one record of a key no other writer touches.
public struct ConcurrentWritersWorkload: Sendable {
    public static let workload = "P7"
    /// The writer counts P7 measures.
    public static let writerCounts = [1, 4, 16]
    /// How often a write the server rolled back for a serialization failure is tried again, at most.
    static let attempts = 1000

    /// The implementations, in the order a round starts with.
    public enum Subject: String, CaseIterable, Sendable {
        case raw
        case ours
    }

    /// One run's figures.
    public struct Run: Sendable {
        /// The seconds from the first writer's start to the last one's end.
        public var seconds: Double
        /// How many transactions the server rolled back (serialization failures) and the writer ran again.
        public var retries: Int
    }

    /// Commits per run, spread evenly over the writers.
    public let commits: Int
    /// Records `1…commits`: record `id` goes to writer `(id - 1) % writers`.
    private let people: [Person]
    private let expected: Checksum

    public init(commits: Int) {
        self.commits = commits
        let generator = PersonGenerator(count: max(1, commits))
        people = (0..<commits).map { generator.person(id: Int64($0) + 1) }
        expected = Checksum(people)
    }

    /// Runs once on a fresh store: connects the writers (not timed), times their commits, verifies every record.
    /// - Throws: ``VerificationError`` when a record is missing or wrong; the implementation's errors.
    public func run(_ subject: Subject, writers: Int, server: PostgresServer) throws -> Run {
        let shares = (0..<writers).map { writer in
            Array(people.enumerated().lazy.filter { $0.offset % writers == writer }.map(\.element))
        }
        let run: Run
        let stored: Checksum
        switch subject {
        case .raw:
            run = try runRaw(shares, server: server)
            stored = Checksum(try RawPostgresSubject(server: server, fresh: false).fetchAll())
        case .ours:
            run = try runOurs(shares, server: server)
            stored = Checksum(try OursPostgresSubject(server: server, fresh: false).fetchAll())
        }
        let verify = Verifier(workload: "\(Self.workload)×\(writers)", implementation: subject.rawValue)
        try verify.expect(stored, equals: expected, "stored records")
        return run
    }

    /// Ours: one `PostgresDatabase` for every writer, a task each, with the async API (`write(retryingUpTo:)`, one
    /// `upsert` per write).
    private func runOurs(_ shares: [[Person]], server: PostgresServer) throws -> Run {
        var builder = try server.builder()
        try builder.deleteStore()
        builder.poolSize = max(2, shares.count)
        let db = try builder.create()
        defer { try? db.close() }
        // The pool's connections are opened as writes need them: open them before the clock starts, as raw's are.
        try blockingWait {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in shares { group.addTask { try await db.write { _ in } } }
                try await group.waitForAll()
            }
        }
        let (retries, seconds) = try Stopwatch.time {
            try blockingWait {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for share in shares {
                        group.addTask {
                            let attempts = Mutex(0)
                            for person in share {
                                try await db.write(retryingUpTo: Self.attempts) { context in
                                    attempts.withLock { $0 += 1 }
                                    try context.upsert(person)
                                }
                            }
                            return attempts.withLock { $0 } - share.count
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
        }
        return Run(seconds: seconds, retries: retries)
    }

    /// Raw: one `PostgresConnection` per writer, each writing from a task of its own.
    private func runRaw(_ shares: [[Person]], server: PostgresServer) throws -> Run {
        _ = try RawPostgresSubject(server: server, fresh: true)
        let connections = try blockingWait {
            try await withThrowingTaskGroup(of: PostgresConnection.self) { group in
                for _ in shares { group.addTask { try await server.connect() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        defer { for connection in connections { try? connection.close().wait() } }
        let (retries, seconds) = try Stopwatch.time {
            try blockingWait {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for (connection, share) in zip(connections, shares) {
                        group.addTask { try await RawPostgresSubject.upsertEach(share, on: connection) }
                    }
                    return try await group.reduce(0, +)
                }
            }
        }
        return Run(seconds: seconds, retries: retries)
    }
}
