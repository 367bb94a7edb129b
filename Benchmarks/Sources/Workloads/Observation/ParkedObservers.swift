import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// O1's observers: observations of ``Note`` on one store, each iterated by a task of its own that has received its
/// first value and waits for the next — what screens watching another entity look like to a commit of `Person`.
///
/// ``start(_:count:on:verify:)`` returns once every task has its first value (for `values`; has started, for
/// `changes`), on its way to wait for the next; ``stop()`` cancels them, waits for each to finish and checks that
/// the hub is empty again and that no commit of `Person` woke an observer of `Note`.
final class ParkedObservers {
    /// Which observation each task iterates.
    enum Kind {
        /// `observe(Note.self)`: its first value (no notes) arrives at once.
        case values
        /// `changes(of: Note.self)`: no first value; while one is live, every write transaction records the
        /// primary keys it changes.
        case changes
    }

    /// What the tasks report back.
    private final class Tally: Sendable {
        /// Values (or change sets) received, over every task.
        let received = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)
        /// Signalled by each task once it is about to wait (for `values`: once its first value arrived).
        let waiting = DispatchSemaphore(value: 0)
        /// Signalled by each task when it ends.
        let ended = DispatchSemaphore(value: 0)
    }

    /// How long a task may take to start waiting or to end before the run is called wrong.
    private static let timeout = DispatchTimeInterval.seconds(30)

    private let kind: Kind
    private let tasks: [Task<Void, Never>]
    private let tally: Tally
    private let hub: ObservationHub
    private let verify: Verifier
    private var isEnded = false

    private init(kind: Kind, tasks: [Task<Void, Never>], tally: Tally, hub: ObservationHub, verify: Verifier) {
        self.kind = kind
        self.tasks = tasks
        self.tally = tally
        self.hub = hub
        self.verify = verify
    }

    /// Makes `count` observations of `kind` on `db`, each iterated by a task, and returns once every task is on its
    /// way to wait for a commit that concerns it.
    static func start<D: Database>(_ kind: Kind, count: Int, on db: D, verify: Verifier) throws -> ParkedObservers {
        let tally = Tally()
        let tasks = (0..<count).map { _ -> Task<Void, Never> in
            switch kind {
            case .values:
                let values = db.observe(Note.self)
                return Task {
                    defer { tally.ended.signal() }
                    var isFirst = true
                    do {
                        for try await _ in values {
                            tally.received.add(1, ordering: .relaxed)
                            // The first value: from the loop's next call on, the task waits for a commit of `Note`.
                            if isFirst { tally.waiting.signal() }
                            isFirst = false
                        }
                    } catch {
                        tally.failure.withLock { $0 = $0 ?? "\(error)" }
                        if isFirst { tally.waiting.signal() }
                    }
                }
            case .changes:
                let changes = db.changes(of: Note.self)
                return Task {
                    defer { tally.ended.signal() }
                    tally.waiting.signal()
                    for await _ in changes { tally.received.add(1, ordering: .relaxed) }
                }
            }
        }
        let observers = ParkedObservers(kind: kind, tasks: tasks, tally: tally, hub: db.observationHub, verify: verify)
        do {
            for _ in tasks {
                guard tally.waiting.wait(timeout: .now() + timeout) == .success else {
                    throw VerificationError(
                        workload: verify.workload, implementation: verify.implementation,
                        message: "\(count) observers of Note did not all start within \(timeout)")
                }
            }
            try observers.checkFailure()
            let subscribed = observers.hub.subscriberCount
            try verify.expect(subscribed == count, "\(subscribed) observations subscribed, expected \(count)")
        } catch {
            try? observers.end()
            throw error
        }
        return observers
    }

    /// Cancels every task, waits for each to end, and checks what they received.
    func stop() throws {
        try end()
        try checkFailure()
        let expected = kind == .values ? tasks.count : 0
        let received = tally.received.load(ordering: .relaxed)
        try verify.expect(
            received == expected,
            "observers of Note received \(received) values, expected \(expected): commits of Person woke them")
        try verify.expect(
            hub.subscriberCount == 0, "\(hub.subscriberCount) observations still subscribed after they ended")
    }

    /// Cancels every task and waits for each to end; nothing the second time.
    private func end() throws {
        guard !isEnded else { return }
        isEnded = true
        for task in tasks { task.cancel() }
        for _ in tasks {
            guard tally.ended.wait(timeout: .now() + Self.timeout) == .success else {
                throw VerificationError(
                    workload: verify.workload, implementation: verify.implementation,
                    message: "a cancelled observer of Note did not end within \(Self.timeout)")
            }
        }
    }

    /// Throws what a task failed with, after ending them all.
    private func checkFailure() throws {
        guard let failure = tally.failure.withLock({ $0 }) else { return }
        try? end()
        throw VerificationError(
            workload: verify.workload, implementation: verify.implementation,
            message: "an observer of Note failed: \(failure)")
    }

    deinit {
        // A run that failed midway: leave no task behind.
        for task in tasks { task.cancel() }
    }
}
