import Foundation

extension PersistenceError {
    /// Whether the failed transaction left nothing committed and may simply be run again:
    /// ``Code/conflict`` and ``Code/connectionLost``. Never ``Code/commitOutcomeUnknown``.
    public var isRetryable: Bool { code == .conflict || code == .connectionLost }
}

extension Database {
    /// Runs a write transaction, and runs it again — a new transaction, `body` called again — when it fails with a
    /// retryable error (``PersistenceError/isRetryable``: a ``PersistenceError/Code/conflict`` with a concurrent
    /// writer, or a ``PersistenceError/Code/connectionLost``), up to `attempts` runs in all.
    ///
    /// A write never re-runs by itself: `write(_:)` runs `body` exactly once and throws the retryable error. This is
    /// the explicit opt-in, for bodies that are safe to run again — ones whose only effects are on the database
    /// (what a failed attempt changed was rolled back whole). Between attempts it waits a short, growing, random
    /// time, so colliding writers don't collide again in step.
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
        guard attempts >= 1 else {
            throw PersistenceError(.invalidArgument, "a write needs at least one attempt")
        }
        var attempt = 1
        while true {
            do {
                return try write(body)
            } catch let error as PersistenceError where error.isRetryable && attempt < attempts {
                Thread.sleep(forTimeInterval: Self.retryDelay(after: attempt))
                attempt += 1
            }
        }
    }

    /// Runs a write transaction off the cooperative pool, again when it fails with a retryable error, up to
    /// `attempts` runs in all (see the synchronous ``write(retryingUpTo:_:)-(_,(Context)->R)``). Cancelling the
    /// task stops between attempts.
    @discardableResult
    public func write<R: Sendable>(
        retryingUpTo attempts: Int, _ body: @escaping @Sendable (Context) throws -> R
    ) async throws -> R {
        guard attempts >= 1 else {
            throw PersistenceError(.invalidArgument, "a write needs at least one attempt")
        }
        var attempt = 1
        while true {
            do {
                return try await write(body)
            } catch let error as PersistenceError where error.isRetryable && attempt < attempts {
                try await Task.sleep(for: .seconds(Self.retryDelay(after: attempt)))
                attempt += 1
            }
        }
    }

    /// A random wait of up to 1, 2, 4… 64 ms after the attempt-th failure.
    private static func retryDelay(after attempt: Int) -> Double {
        Double.random(in: 0...(0.001 * Double(1 << min(attempt - 1, 6))))
    }
}
