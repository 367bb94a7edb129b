/// The values of an observed read: the current value first, then a fresh one after each committed write that
/// touches what the read depends on.
///
/// Made by ``Database/observe(_:where:sortedBy:limit:offset:)`` and its siblings. Each value is read in its own
/// read transaction, so it is a consistent snapshot of committed data: never a torn value, never one from a write
/// that rolled back. Values come in commit order. A consumer slower than the writes sees the latest value and
/// skips the ones in between (values coalesce; they are never queued), and a value may repeat when a write touched
/// the entity without changing the result, or committed while the previous value was being read.
///
/// The observation starts when it is made: a write that commits between `observe(…)` and the first iteration is
/// in the first value. It ends when the iterating task is cancelled, when the sequence and its iterator are
/// released, or when a read fails (the error is thrown from the loop). Iterate it once.
///
/// ```swift
/// for try await users in db.observe(User.self, sortedBy: [.ascending("name")]) {
///     render(users)
/// }
/// ```
public struct ObservedValues<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = any Error

    private let subscriber: ObservationSubscriber
    private let hub: ObservationHub
    private let fetch: @Sendable () async throws -> Element

    /// Observes what `fetch` reads, re-reading after each commit touching `entities` or `aliases`.
    init(
        hub: ObservationHub, entities: Set<String>, aliases: Set<String> = [],
        fetch: @escaping @Sendable () async throws -> Element
    ) {
        self.hub = hub
        self.fetch = fetch
        subscriber = ObservationSubscriber(hub: hub, entities: entities, aliases: aliases, buffersChanges: false)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(subscriber: subscriber, hub: hub, fetch: fetch) }

    /// Reads the first value, then waits for each commit that concerns the observation and reads again.
    public struct Iterator: AsyncIteratorProtocol {
        private let subscriber: ObservationSubscriber
        private let hub: ObservationHub
        private let fetch: @Sendable () async throws -> Element
        private var seen: UInt64?
        private var isFinished = false

        init(
            subscriber: ObservationSubscriber, hub: ObservationHub,
            fetch: @escaping @Sendable () async throws -> Element
        ) {
            self.subscriber = subscriber
            self.hub = hub
            self.fetch = fetch
        }

        /// The next value; `nil` once the task is cancelled.
        public mutating func next() async throws -> Element? {
            guard !isFinished, !Task.isCancelled else { return finish() }
            if let seen {
                guard await subscriber.waitForCommit(after: seen) else { return finish() }
            }
            // Noted before the read begins: the read sees at least every commit up to here, so a later one
            // wakes the next call.
            seen = hub.sequence
            do {
                return try await fetch()
            } catch is CancellationError {
                return finish()
            } catch {
                _ = finish()
                throw error
            }
        }

        private mutating func finish() -> Element? {
            isFinished = true
            subscriber.end()
            return nil
        }
    }
}

/// The change sets of one entity type, one per commit that changed its records, in commit order.
///
/// Made by ``Database/changes(of:)``. Unlike ``ObservedValues`` nothing is coalesced: a consumer slower than the
/// writes receives every change set, buffered in memory until it catches up — up to 1,000 change sets or 100,000
/// primary keys in them. Past that, the buffer is replaced by one change set whose ``EntityChanges/isComplete`` is
/// `false` ("anything may have changed: read again"), and commits that come while it waits are folded into it; so an
/// observation nobody iterates holds bounded memory. It starts when made, ends when the iterating task is cancelled
/// or the sequence and its iterator are released. Iterate it once.
public struct ObservedChanges<E: Entity>: AsyncSequence, Sendable {
    public typealias Failure = Never

    private let subscriber: ObservationSubscriber
    private let layout: RecordLayout?

    package init(hub: ObservationHub) {
        layout = try? SchemaCache.layout(for: E.self)
        subscriber = ObservationSubscriber(hub: hub, entities: [E.entityName], buffersChanges: true)
    }

    public func makeAsyncIterator() -> Iterator { Iterator(subscriber: subscriber, layout: layout) }

    /// Waits for each commit's change set.
    public struct Iterator: AsyncIteratorProtocol {
        private let subscriber: ObservationSubscriber
        private let layout: RecordLayout?

        init(subscriber: ObservationSubscriber, layout: RecordLayout?) {
            self.subscriber = subscriber
            self.layout = layout
        }

        /// The next commit's changes to `E`; `nil` once the task is cancelled.
        public mutating func next() async -> EntityChanges<E>? {
            guard let changes = await subscriber.nextChanges() else { return nil }
            guard let layout else { return EntityChanges(isComplete: false) }
            return EntityChanges(changes.entities[E.entityName], layout: layout)
        }
    }
}
