public import PersistenceCore
import Synchronization

/// What a sync client is doing, for an app's UI (``SyncClient/statuses``).
public enum SyncStatus: Sendable, CustomStringConvertible {
    /// Not syncing: everything pushed and pulled as of the last sync (or no sync yet).
    case idle
    /// Pushing local changes: this many in the batch under way.
    case pushing(Int)
    /// Pulling the server's changes: this many applied so far in this sync.
    case pulling(Int)
    /// The server can't be reached (no network, the server down): the next try comes later; local writes go on.
    case offline
    /// Another process syncs this store now; its sync pushes this process's writes too.
    case syncingElsewhere
    /// The last sync failed with this error (see its code); the next try comes later.
    case failed(PersistenceError)

    public var description: String {
        switch self {
        case .idle: "idle"
        case .pushing(let count): "pushing \(count)"
        case .pulling(let count): "pulling \(count)"
        case .offline: "offline"
        case .syncingElsewhere: "syncing in another process"
        case .failed(let error): "failed: \(error)"
        }
    }
}

/// The latest value (a status, a progress) and the streams that follow it.
final class LatestValueBroadcast<Value: Sendable>: Sendable {
    private struct State {
        var current: Value
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var next = 0
    }

    private let state: Mutex<State>

    init(_ initial: Value) { state = Mutex(State(current: initial)) }

    var current: Value { state.withLock { $0.current } }

    func publish(_ value: Value) {
        let subscribers = state.withLock { state in
            state.current = value
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }

    /// A stream that starts with the current value; only the newest value is kept for a slow reader.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.next += 1
            state.subscribers[state.next] = continuation
            continuation.yield(state.current)
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }
}

/// Wakes a waiting sync loop: a local write (sync if something is pending), `syncNow()` (sync whatever is pending),
/// or the wait's end.
final class SyncWakeSignal: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Bool, Never>?
        /// A signal came while nobody waited: the next wait returns at once.
        var pending = false
        /// One of them was `syncNow()`.
        var forced = false
    }

    private let state = Mutex(State())

    /// Wakes the waiter, or the next wait at once; `force`: the loop must sync even with nothing to push.
    func signal(force: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                state.forced = state.forced || force
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: force)
    }

    /// Ends the wait under way, if any, as not forced (its time is up, or its task was cancelled).
    private func expire() {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: false)
    }

    /// Waits until signalled, for at most `timeout`, or until the task is cancelled.
    /// - Returns: Whether a signal forced a sync (``signal(force:)``).
    func wait(upTo timeout: Duration) async -> Bool {
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.expire()
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { state -> Bool? in
                    if state.pending {
                        defer {
                            state.pending = false
                            state.forced = false
                        }
                        return state.forced
                    }
                    if Task.isCancelled { return false }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            self.expire()
        }
    }
}
