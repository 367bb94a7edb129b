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
