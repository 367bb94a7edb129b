import Synchronization

/// Keeps an observation started with ``ValueObservation/start(in:onError:onChange:)`` going: cancel it, or release
/// it, to stop the observation.
///
/// ```swift
/// @MainActor final class TodosModel {
///     private(set) var todos: [Todo] = []
///     private var token: ObservationToken?
///
///     func appear(_ db: some Database) {
///         token = ValueObservation.records(Todo.self).start(in: db) { [weak self] todos in self?.todos = todos }
///     }
///     func disappear() { token?.cancel() }       // or let the model go
/// }
/// ```
///
/// Cancelling is immediate and final: the observation leaves the database's observers before ``cancel()`` returns,
/// and no value or error is delivered after it — called on the actor that receives them (the main actor for
/// ``ValueObservation/start(in:onError:onChange:)``), not even one already read and on its way. Called from
/// elsewhere, a delivery that had begun on that actor may still finish. Releasing the token cancels it.
public final class ObservationToken: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var end: (@Sendable () -> Void)?
    }

    /// What deliveries check, on the receiving actor, right before calling back: the task holds it, not the token,
    /// so releasing the token cancels.
    let flag = CancellationFlag()
    private let state = Mutex(State())

    init() {}

    deinit { cancel() }

    /// Whether ``cancel()`` was called (or the token released); an observation that ended by itself, after an
    /// error, isn't cancelled.
    public var isCancelled: Bool { flag.isCancelled }

    /// Stops the observation: no value or error is delivered afterwards, and it no longer holds its database's
    /// observers. Cancelling again does nothing.
    public func cancel() {
        flag.cancel()
        let (task, end) = state.withLock { state in
            defer { state.end = nil }
            return (state.task, state.end)
        }
        task?.cancel()
        end?()
    }

    /// Hands over the task that delivers later values and how to end the observation; both are cancelled and ended
    /// at once when the token was cancelled first.
    func run(_ task: Task<Void, Never>, end: @escaping @Sendable () -> Void) {
        state.withLock { state in
            state.task = task
            state.end = end
        }
        if flag.isCancelled { cancel() }
    }

    /// Waits until the observation's delivery task has ended (cancelled, failed, or the token released): once it
    /// returns, nothing more will be delivered. For tests.
    package func finished() async {
        let task = state.withLock { $0.task }
        await task?.value
    }
}
