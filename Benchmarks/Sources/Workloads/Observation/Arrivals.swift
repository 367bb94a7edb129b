import Foundation
import PersistenceCore
import Synchronization

/// An observation of how many records of one entity a store holds, iterated by a task that notes when each new count
/// arrives; the measuring thread waits for the count it expects (O2, Y2).
final class Arrivals: Sendable {
    private struct Latest {
        var count = -1
        var time = ContinuousClock.now
        var failure: String?
    }

    /// How long a wait for a value lasts before the run is called wrong.
    static let timeout = DispatchTimeInterval.seconds(30)

    private let state = Mutex(Latest())
    /// Signalled once per new count, and when the observation fails.
    private let arrived = DispatchSemaphore(value: 0)
    /// Signalled when the observing task ends.
    private let ended = DispatchSemaphore(value: 0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    private init() {}

    /// Starts observing `observe(tracking: [entity]) { try $0.count(entity) }` on `db`; call ``stop()`` when done.
    static func counting<E: Entity, D: Database>(_ entity: E.Type, in db: D) -> Arrivals {
        let arrivals = Arrivals()
        let counts = db.observe(tracking: [entity]) { context in try context.count(entity) }
        let task = Task {
            defer { arrivals.ended.signal() }
            do {
                for try await count in counts { arrivals.note(count, at: .now) }
            } catch {
                arrivals.fail(error)
            }
        }
        arrivals.task.withLock { $0 = task }
        return arrivals
    }

    /// Ends the observation and waits (up to ``timeout``) for its task to end.
    func stop() {
        task.withLock { $0?.cancel() }
        _ = ended.wait(timeout: .now() + Self.timeout)
    }

    /// Waits for the value counting `expected` records; returns when it arrived.
    /// - Throws: ``VerificationError`` when no new value arrives within ``timeout``, the observation failed or the
    ///   new value isn't `expected`.
    func wait(counting expected: Int, _ verify: Verifier) throws -> ContinuousClock.Instant {
        guard arrived.wait(timeout: .now() + Self.timeout) == .success else {
            throw VerificationError(
                workload: verify.workload, implementation: verify.implementation,
                message: "no value counting \(expected) records arrived within \(Self.timeout)")
        }
        let latest = state.withLock { $0 }
        if let failure = latest.failure {
            throw VerificationError(
                workload: verify.workload, implementation: verify.implementation,
                message: "the observation failed: \(failure)")
        }
        try verify.expect(latest.count == expected, "a value counted \(latest.count) records, expected \(expected)")
        return latest.time
    }

    /// Notes a value; a count seen already (a value may repeat) is ignored.
    private func note(_ count: Int, at time: ContinuousClock.Instant) {
        let isNew = state.withLock { latest in
            guard count > latest.count else { return false }
            latest.count = count
            latest.time = time
            return true
        }
        if isNew { arrived.signal() }
    }

    private func fail(_ error: any Error) {
        state.withLock { $0.failure = "\(error)" }
        arrived.signal()
    }
}
