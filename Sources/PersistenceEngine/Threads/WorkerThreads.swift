import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Synchronization

/// Threads of a database's own that run blocking work — a server's transactions, each waiting on the network — up to
/// a limit, so that as many of them run at once as the database has connections.
///
/// Dispatch's concurrent queues are the wrong tool for work that blocks: on Linux they run about as many items at
/// once as the machine has cores, so sixteen transactions each waiting on the server would take turns two at a time.
/// These threads start as work arrives (never more than `limit`), take jobs in the order they were submitted, and
/// end when ``stop()`` is called; none of them is an event-loop thread or one of the cooperative pool's.
package final class WorkerThreads: Sendable {
    package typealias Job = @Sendable () -> Void

    private struct State {
        var jobs: [Job] = []
        /// Where the next job to run is in `jobs` (taken jobs are removed in batches, not one by one).
        var head = 0
        var threads = 0
        var idle = 0
        var isStopped = false
    }

    private let state = Mutex(State())
    /// Signalled once per job handed to an idle thread, and once per thread at `stop()`.
    private let wake = DispatchSemaphore(value: 0)
    private let limit: Int
    private let name: String

    /// Threads named `name`, at most `limit` (at least one).
    package init(name: String, limit: Int) {
        self.name = name
        self.limit = max(1, limit)
    }

    /// Runs `job` on one of the threads, at once when one is idle or may still be started, else when one is free.
    /// - Returns: `false` (and the job doesn't run) once the threads were stopped.
    @discardableResult
    package func submit(_ job: @escaping Job) -> Bool {
        enum Action { case refuse, wake, start, queue }
        let action = state.withLock { state -> Action in
            guard !state.isStopped else { return .refuse }
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                return .wake
            }
            guard state.threads < limit else { return .queue }
            state.threads += 1
            return .start
        }
        switch action {
        case .refuse: return false
        case .wake: wake.signal()
        case .start: startThread()
        case .queue: break
        }
        return true
    }

    /// Lets the threads end once the jobs already submitted have run; later submissions are refused.
    package func stop() {
        let sleeping = state.withLock { state -> Int in
            state.isStopped = true
            let sleeping = state.idle
            state.idle = 0
            return sleeping
        }
        for _ in 0..<sleeping { wake.signal() }
    }

    private func startThread() {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        thread.start()
    }

    /// A thread's loop: the next job, or sleep until one is handed over; ends once stopped with nothing left.
    private func runJobs() {
        while true {
            enum Next {
                case run(Job)
                case sleep
                case end
            }
            let next = state.withLock { state -> Next in
                if state.head < state.jobs.count {
                    let job = state.jobs[state.head]
                    state.head += 1
                    if state.head == state.jobs.count || state.head >= 64 {
                        state.jobs.removeFirst(state.head)
                        state.head = 0
                    }
                    return .run(job)
                }
                guard !state.isStopped else {
                    state.threads -= 1
                    return .end
                }
                state.idle += 1
                return .sleep
            }
            switch next {
            case .run(let job): job()
            case .sleep: wake.wait()
            case .end: return
            }
        }
    }
}
