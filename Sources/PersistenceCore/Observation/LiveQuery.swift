public import Observation

/// A live query a SwiftUI view can hold: its ``value`` is an observation's latest value, read at once when it is
/// made and kept up to date as the store changes — an `@Observable` model (the Observation framework), so views
/// that read it redraw when it changes.
///
/// ```swift
/// struct TodoList: View {
///     @State private var todos: LiveQuery<[Todo]>
///
///     init(db: SQLiteDatabase) {
///         _todos = State(initialValue: LiveQuery(.records(Todo.self, sortedBy: [.ascending("due")]), in: db))
///     }
///
///     var body: some View {
///         List(todos.value) { Text($0.title) }          // the records on the first frame, then as they change
///     }
/// }
/// ```
///
/// It starts its ``ValueObservation`` with ``ValueObservation/start(in:onError:onChange:)``: the first value is read
/// synchronously in `init`, later ones arrive on the main actor after each commit that changes them (duplicates
/// left out). A failed read sets ``error`` and ends the observation, keeping the last value; ``cancel()`` or
/// releasing the model ends it too.
///
/// Outside SwiftUI, `withObservationTracking` sees the changes as well:
///
/// ```swift
/// withObservationTracking { _ = todos.value } onChange: { print("todos changed") }
/// ```
@MainActor
@Observable
public final class LiveQuery<Value: Sendable> {
    /// The latest value: read when the model was made, then replaced after each commit that changed it.
    public private(set) var value: Value
    /// The error of the read that failed, which ended the observation; `nil` while it runs.
    public private(set) var error: (any Error)? = nil
    /// Releasing the model releases the token, which ends the observation.
    @ObservationIgnored private var token: ObservationToken? = nil

    /// Starts `observation` on `db`, reading its first value now; `placeholder` is the value when that read fails
    /// (see ``error``).
    ///
    /// ```swift
    /// let unread = LiveQuery(.tracking { try $0.count(Message.self) }, in: db, placeholder: 0)
    /// ```
    public init(_ observation: ValueObservation<Value>, in db: some Database, placeholder: Value) {
        value = placeholder
        token = observation.start(
            in: db, onError: { [weak self] error in self?.error = error },
            onChange: { [weak self] value in self?.value = value })
    }

    /// Starts a list observation on `db`, reading its records now (none when that read fails: see ``error``).
    public convenience init<E: Entity>(_ observation: ValueObservation<[E]>, in db: some Database)
    where Value == [E] {
        self.init(observation, in: db, placeholder: [])
    }

    /// Starts an observation of one record on `db`, reading it now (`nil` when that read fails: see ``error``).
    public convenience init<E: Entity>(_ observation: ValueObservation<E?>, in db: some Database)
    where Value == E? {
        self.init(observation, in: db, placeholder: nil)
    }

    /// Whether the observation still runs: not cancelled, and no read failed.
    public var isActive: Bool { error == nil && token?.isCancelled == false }

    /// Stops updating ``value``.
    public func cancel() { token?.cancel() }
}
