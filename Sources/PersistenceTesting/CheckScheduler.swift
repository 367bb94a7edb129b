import Foundation
import Synchronization
import Testing

/// Runs the suites' checks a few at a time, each on a thread of its own, and times each by its own work.
///
/// A backend's tests run every check as one parameterised test, and Swift Testing starts them all at once. The checks'
/// synchronous database calls would then block the cooperative pool (two threads on a 2-core machine) while the
/// others queue behind them, and a time limit counted from each test's start counted that queue: on a busy machine
/// PostgreSQL's 160 cases ran past their 5-minute limits though each took seconds. Here a check first waits —
/// suspended, holding no thread — for one of a few slots; it then runs on the slot's own thread (a task executor
/// preference: blocking calls never block the cooperative pool), and its time limit starts then.
///
/// The slots: twice the active processors (the server's work overlaps the client's), or
/// `PERSISTENCE_TEST_PARALLELISM` when set to a positive number.
package final class CheckScheduler: Sendable {
    /// The scheduler every suite's checks share: one test process runs every backend's.
    package static let shared = CheckScheduler(slots: CheckScheduler.defaultSlots)

    /// How long a check may run once it has a slot, unless it says otherwise.
    package static let defaultTimeLimit: Duration = .seconds(300)

    private struct State {
        var free: [CheckThread]
        var waiting: [CheckedContinuation<CheckThread, Never>] = []
    }

    private let state: Mutex<State>

    package init(slots: Int) {
        state = Mutex(State(free: (0..<max(1, slots)).map { CheckThread(name: "persistence-check-\($0)") }))
    }

    static var defaultSlots: Int {
        if let text = ProcessInfo.processInfo.environment["PERSISTENCE_TEST_PARALLELISM"], let slots = Int(text),
            slots > 0
        {
            return slots
        }
        return 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
    }

    /// Runs `work` once a slot is free, on the slot's thread; records an issue when it took longer than
    /// `timeLimit` from then (its own time, not the time it waited for a slot).
    package func run<R: Sendable>(
        timeLimit: Duration = CheckScheduler.defaultTimeLimit, _ work: @Sendable () async throws -> R
    ) async throws -> R {
        let thread = await acquire()
        defer { release(thread) }
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await withTaskExecutorPreference(thread) { try await work() }
        let elapsed = clock.now - start
        if elapsed > timeLimit {
            Issue.record("the check took \(elapsed) once it ran, past its time limit of \(timeLimit)")
        }
        return result
    }

    private func acquire() async -> CheckThread {
        // Taken at once when a slot is free; else suspended until a release hands one over.
        await withCheckedContinuation { continuation in
            let thread = state.withLock { state -> CheckThread? in
                guard let thread = state.free.popLast() else {
                    state.waiting.append(continuation)
                    return nil
                }
                return thread
            }
            if let thread { continuation.resume(returning: thread) }
        }
    }

    private func release(_ thread: CheckThread) {
        let next = state.withLock { state -> CheckedContinuation<CheckThread, Never>? in
            guard !state.waiting.isEmpty else {
                state.free.append(thread)
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: thread)
    }
}

/// A task executor with one thread of its own, which runs the jobs enqueued on it in order.
final class CheckThread: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    /// Signalled when a job is enqueued; the thread waits on it while there is none.
    private let signal = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { self.runJobs() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        signal.signal()
    }

    /// Runs jobs as they come, for the life of the process (the scheduler's threads are never released).
    private func runJobs() -> Never {
        while true {
            signal.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
