import Foundation

extension PersistenceError {
    /// Whether the failed transaction left nothing committed and may simply be run again: ``Code/conflict`` (a
    /// concurrent writer), ``Code/connectionLost`` (before the commit), ``Code/busy`` (the store locked by another
    /// process, a server starting up or shutting down) and ``Code/unreachable`` (a server restarting or failing over).
    /// Never ``Code/commitOutcomeUnknown``: that write may have been committed.
    public var isRetryable: Bool {
        code == .conflict || code == .connectionLost || code == .busy || code == .unreachable
    }
}

/// How `Database/write(retrying:_:)` runs a failed write again: how many times, how long it waits
/// between attempts — exponential backoff with jitter — and whether an attempt whose commit outcome is unknown runs
/// again.
///
/// The default rides out a PostgreSQL restart or a short failover: up to 12 attempts, waits growing from 5–10 ms to
/// 0.5–1 s, about 2.5 to 5 seconds in all.
///
/// ```swift
/// var patient = RetryPolicy()
/// patient.maximumDuration = .seconds(60)          // a failover may take longer
/// try db.write(retrying: patient) { context in … }
/// ```
public struct RetryPolicy: Sendable, Hashable {
    /// The most times the body runs, at least 1.
    public var maximumAttempts: Int
    /// The longest wait before the second attempt; each later wait's bound grows by ``multiplier``.
    public var initialDelay: Duration
    /// How much each wait's bound grows after a failed attempt, at least 1.
    public var multiplier: Double
    /// No wait is longer than this.
    public var maximumDelay: Duration
    /// How much of each wait is random, from 0 (every wait is its bound) to 1 (uniformly from 0 to its bound; "full
    /// jitter"). The default, 0.5, waits between half the bound and the bound: writers that failed together don't
    /// retry together, and the waits still add up to enough to outlast a restart.
    public var jitter: Double
    /// No attempt starts once this much time has passed since the first one began; `nil` for no limit but
    /// ``maximumAttempts``.
    public var maximumDuration: Duration?
    /// Whether an attempt that failed with ``PersistenceError/Code/commitOutcomeUnknown`` — the connection dropped
    /// while the server committed, so the write may be in the store — runs again. `false` unless the body is
    /// idempotent: running it twice leaves the store as running it once does (upserts of records with keys it
    /// chose, a write that first checks for a marker the previous run would have left).
    public var retriesUnknownOutcome: Bool

    /// A policy; every value has a default (see the type's overview).
    public init(
        maximumAttempts: Int = 12, initialDelay: Duration = .milliseconds(10), multiplier: Double = 2,
        maximumDelay: Duration = .seconds(1), jitter: Double = 0.5, maximumDuration: Duration? = nil,
        retriesUnknownOutcome: Bool = false
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.maximumDuration = maximumDuration
        self.retriesUnknownOutcome = retriesUnknownOutcome
    }

    /// For writers colliding on one store: `attempts` runs in all, waits of up to 1, 2, 4… 64 ms (full jitter) — what
    /// ``Database/write(retryingUpTo:_:)-7n6ls`` uses.
    public static func collisions(attempts: Int) -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: attempts, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(64), jitter: 1)
    }

    /// For writers colliding on one store, retried for up to `duration` rather than a number of attempts: waits of up
    /// to 1, 2, 4… 64 ms (full jitter). On PostgreSQL, while a long write transaction runs, the server's bookkeeping of
    /// `SERIALIZABLE` transactions grows coarse and may refuse a short write again and again (40001, "conflict out to
    /// old pivot") until the long one ends — however few writers collide for real; this outlasts it.
    ///
    /// ```swift
    /// try db.write(retrying: .collisions(for: .seconds(30))) { context in … }
    /// ```
    public static func collisions(for duration: Duration) -> RetryPolicy {
        RetryPolicy(
            maximumAttempts: .max, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(64), jitter: 1,
            maximumDuration: duration)
    }

    /// Checks the settings.
    /// - Throws: ``PersistenceError/Code/invalidArgument`` naming the first setting out of range.
    func validate() throws {
        guard maximumAttempts >= 1 else {
            throw PersistenceError(.invalidArgument, "a write needs at least one attempt")
        }
        guard initialDelay >= .zero, maximumDelay >= .zero else {
            throw PersistenceError(.invalidArgument, "a retry delay can't be negative")
        }
        guard multiplier >= 1, multiplier.isFinite else {
            throw PersistenceError(.invalidArgument, "the retry delay's multiplier must be at least 1")
        }
        guard (0...1).contains(jitter) else {
            throw PersistenceError(.invalidArgument, "the retry delay's jitter must be between 0 and 1")
        }
        if let maximumDuration, maximumDuration < .zero {
            throw PersistenceError(.invalidArgument, "the retries' maximum duration can't be negative")
        }
    }

    /// Runs `attempt`, and again as the policy says while it fails in a way that left nothing committed (see
    /// `Database.write(retrying:_:)`); cancelling the task stops between attempts.
    /// - Throws: `invalidArgument` for a policy out of range; the last attempt's error.
    package func run<R>(_ attempt: () async throws -> R) async throws -> R {
        try validate()
        let clock = ContinuousClock()
        let start = clock.now
        var number = 1
        while true {
            do {
                return try await attempt()
            } catch let error as PersistenceError where retries(error, after: number, elapsed: clock.now - start) {
                try await Task.sleep(for: delay(after: number))
                number += 1
            }
        }
    }

    /// Whether to run again after the `attempt`-th run failed with `error`, `elapsed` after the first began.
    package func retries(_ error: PersistenceError, after attempt: Int, elapsed: Duration) -> Bool {
        guard attempt < maximumAttempts else { return false }
        guard error.isRetryable || (retriesUnknownOutcome && error.code == .commitOutcomeUnknown) else { return false }
        guard let maximumDuration else { return true }
        return elapsed < maximumDuration
    }

    /// The wait after the `attempt`-th failure: its bound is `initialDelay × multiplier^(attempt − 1)`, at most
    /// `maximumDelay`; the last `jitter` share of it is random.
    package func delay(after attempt: Int) -> Duration {
        let bound = min(initialDelay.seconds * pow(multiplier, Double(max(attempt - 1, 0))), maximumDelay.seconds)
        let fixed = bound * (1 - jitter)
        return .seconds(fixed + Double.random(in: 0...max(bound - fixed, 0)))
    }

}

extension Database {
    /// Runs a write transaction, and runs it again — a new transaction, `body` called again — when it fails in a way
    /// that left nothing committed (``PersistenceError/isRetryable``), as `policy` says: how many times, and how long
    /// to wait between attempts.
    ///
    /// A write never re-runs by itself: `write(_:)` runs `body` exactly once and throws the retryable error. This is
    /// the explicit opt-in, for bodies that are safe to run again — ones whose only effects are on the database
    /// (what a failed attempt changed was rolled back whole). The default policy rides out a PostgreSQL restart: the
    /// attempts that meet a dropped connection, a server starting up or one not reachable yet wait and run again on a
    /// new connection. An attempt whose commit outcome is unknown runs again only when the policy says the body is
    /// idempotent (``RetryPolicy/retriesUnknownOutcome``).
    ///
    /// ```swift
    /// try db.write(retrying: RetryPolicy()) { context in
    ///     var counter = try context.recover(Counter.self, id: 1) ?? Counter(id: 1, value: 0)
    ///     counter.value += 1
    ///     try context.upsert(counter)
    /// }
    /// ```
    ///
    /// - Throws: `invalidArgument` for a policy out of range; the last attempt's error when every attempt failed with
    ///   a retryable one (or time ran out); any other error at once.
    @discardableResult
    public func write<R>(retrying policy: RetryPolicy, _ body: (Context) throws -> R) throws -> R {
        try policy.validate()
        let clock = ContinuousClock()
        let start = clock.now
        var attempt = 1
        while true {
            do {
                return try write(body)
            } catch let error as PersistenceError
                where policy.retries(error, after: attempt, elapsed: clock.now - start)
            {
                Thread.sleep(forTimeInterval: policy.delay(after: attempt).seconds)
                attempt += 1
            }
        }
    }

    /// Runs a write transaction off the cooperative pool, again as `policy` says when it fails in a way that left
    /// nothing committed (see the synchronous `write(retrying:_:)`). Cancelling the task stops
    /// between attempts.
    @discardableResult
    public func write<R: Sendable>(
        retrying policy: RetryPolicy, _ body: @escaping @Sendable (Context) throws -> R
    ) async throws -> R {
        try await policy.run { try await write(body) }
    }

    /// Runs a write transaction, and again when it fails with a retryable error, up to `attempts` runs in all,
    /// waiting up to 1, 2, 4… 64 ms between them: `write(retrying:_:)` with
    /// ``RetryPolicy/collisions(attempts:)``, for writers that collide on one store.
    ///
    /// ```swift
    /// try db.write(retryingUpTo: 5) { context in
    ///     var counter = try context.recover(Counter.self, id: 1) ?? Counter(id: 1, value: 0)
    ///     counter.value += 1
    ///     try context.upsert(counter)
    /// }
    /// ```
    ///
    /// - Parameter attempts: How many times `body` may run, at least 1.
    /// - Throws: `invalidArgument` for fewer than 1 attempt; the last attempt's error when every attempt failed
    ///   with a retryable one; any other error at once.
    @discardableResult
    public func write<R>(retryingUpTo attempts: Int, _ body: (Context) throws -> R) throws -> R {
        try write(retrying: .collisions(attempts: attempts), body)
    }

    /// Runs a write transaction off the cooperative pool, again when it fails with a retryable error, up to
    /// `attempts` runs in all (see the synchronous ``write(retryingUpTo:_:)-7n6ls``). Cancelling the
    /// task stops between attempts.
    @discardableResult
    public func write<R: Sendable>(
        retryingUpTo attempts: Int, _ body: @escaping @Sendable (Context) throws -> R
    ) async throws -> R {
        try await write(retrying: .collisions(attempts: attempts), body)
    }
}
