/// The values of an observed read: the current value first, then a fresh one after each committed write that
/// touches what the read depends on.
///
/// Made by ``Database/observe(_:where:sortedBy:limit:offset:)`` and its siblings, or by ``ValueObservation/values(in:)``
/// from a reusable description. Each value is read in its own read transaction, so it is a consistent snapshot of
/// committed data: never a torn value, never one from a write that rolled back. Values come in commit order. A
/// consumer slower than the writes sees the latest value and skips the ones in between (values coalesce; they are
/// never queued).
///
/// **No duplicates.** A value equal to the last one delivered is not delivered again — a write that touched the
/// entity without changing the result, or a commit that landed while the previous value was being read, produces
/// nothing. That holds by default when `Element` is `Equatable` (arrays and optionals of `Equatable` entities are);
/// ``removeDuplicates(by:)`` compares otherwise, ``allowingDuplicates()`` delivers every value read.
///
/// The observation starts when it is made: a write that commits between `observe(…)` and the first iteration is
/// in the first value. It ends when the iterating task is cancelled, when the sequence and its iterator are
/// released, or when a read fails (the error is thrown from the loop). Iterate it once; for another observation of
/// the same read, start its ``ValueObservation`` again.
///
/// ```swift
/// for try await users in db.observe(User.self, sortedBy: [.ascending("name")]) {
///     render(users)
/// }
/// ```
public struct ObservedValues<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    private let session: ObservationSession<Element>
    private var observation: ValueObservation<Element>
    /// The database observed, to start a derived observation (``differences()``) on.
    private let database: any Database

    /// Starts `observation` on `db`: registered from now on.
    init<D: Database>(_ observation: ValueObservation<Element>, in db: D) {
        self.observation = observation
        session = ObservationSession(observation, in: db)
        database = db
    }

    /// The same list observation, delivering with each list how it differs from the list delivered before it —
    /// ``ValueObservation/differences()`` started on the same database (from this call on).
    ///
    /// ```swift
    /// for try await change in db.observe(Todo.self, sortedBy: [.ascending("due"), .ascending("id")]).differences() {
    ///     rows = change.applied(to: rows)
    ///     animate(change.difference)
    /// }
    /// ```
    public func differences<E: Entity>() -> ObservedValues<ListChange<E>> where Element == [E] {
        ObservedValues<ListChange<E>>(observation.differences(), in: database)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(cursor: ObservationCursor(observation, session: session)) }

    /// The same values, leaving out a value for which `isDuplicate(last, value)` is `true`, `last` being the last
    /// value delivered.
    ///
    /// ```swift
    /// for try await users in db.observe(User.self).removeDuplicates(by: { $0.count == $1.count }) { … }
    /// ```
    public func removeDuplicates(by isDuplicate: @escaping @Sendable (Element, Element) -> Bool) -> Self {
        var values = self
        values.observation = observation.removeDuplicates(by: isDuplicate)
        return values
    }

    /// The same values, delivering every value read — equal ones included.
    public func allowingDuplicates() -> Self {
        var values = self
        values.observation = observation.allowingDuplicates()
        return values
    }

    /// Reads the first value, then waits for each commit that concerns the observation and reads again.
    public struct Iterator: AsyncIteratorProtocol {
        private var cursor: ObservationCursor<Element>

        init(cursor: ObservationCursor<Element>) { self.cursor = cursor }

        /// The next value; `nil` once the task is cancelled.
        public mutating func next() async throws -> Element? { try await cursor.next() }
    }
}

extension ObservedValues where Element: Equatable {
    /// The same values, leaving out a value equal to the last one delivered (the default for `Equatable` values,
    /// unless ``allowingDuplicates()`` said otherwise).
    public func removeDuplicates() -> Self { removeDuplicates(by: ==) }
}
