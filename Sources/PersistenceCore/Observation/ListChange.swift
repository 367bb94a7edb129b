/// One value of a list observation made with ``ValueObservation/differences()``: the records now, and how they
/// differ from the records of the value before.
///
/// The first value's difference inserts every record (the list before it is empty). Each later value comes after a
/// commit that changed the list — a record entered or left it, moved, or changed — with the difference from the
/// value delivered before it, so applying each value's difference in turn to the first value's records always
/// gives the current ones (see ``applied(to:)``).
///
/// ```swift
/// let token = ValueObservation.records(Todo.self, sortedBy: [.ascending("due")]).differences().start(in: db) { change in
///     rows = change.applied(to: rows)                  // equals change.elements
///     animate(change.difference)
/// }
/// ```
public struct ListChange<E: Entity>: Sendable {
    /// The records now, in the observed query's order.
    public var elements: [E]
    /// How ``elements`` differs from the records of the value delivered before it.
    public var difference: ListDifference

    /// Creates a change.
    public init(elements: [E], difference: ListDifference) {
        self.elements = elements
        self.difference = difference
    }

    /// The records of the value before, changed by ``difference``: equals ``elements``.
    public func applied(to old: [E]) -> [E] { difference.applied(to: old, new: elements) }
}

extension ListChange: Equatable where E: Equatable {}

extension ValueObservation {
    /// The same list observation, delivering with each list how it differs from the list delivered before it:
    /// inserts, deletes, moves and updates by position, records matched by primary key.
    ///
    /// ```swift
    /// let todos = ValueObservation.records(Todo.self, sortedBy: [.ascending("due"), .ascending("title")]).differences()
    /// for try await change in todos.values(in: db) {
    ///     print(change.difference.insertions, change.difference.deletions, change.difference.moves)
    /// }
    /// ```
    ///
    /// A record is *updated* when it is in both lists with other content: `==` for an `Equatable` entity, else other
    /// stored values. A value whose list has the same records with the same content as the last one is not
    /// delivered (``allowingDuplicates()`` after this call delivers it, with an empty difference). Sort the query
    /// fully (the primary key breaks ties), so that a record moves only when its sort keys changed. Of a
    /// ``records(_:where:sortedBy:limit:offset:)`` observation, the records whose sort keys changed are the ones
    /// that move (``ListDifference``).
    public func differences<E: Entity>() -> ValueObservation<ListChange<E>> where Value == [E] {
        let read = self.read
        let same = ValueEquality.records(E.self)
        let sameSortKeys = ValueEquality.sortKeys(E.self, sortAttributes)
        let sameList = ValueEquality.lists(E.self)
        var observation = ValueObservation<ListChange<E>>(
            declared: declared,
            reduce: { previous, current in
                let difference = ListDifference(
                    from: previous?.elements ?? [], to: current.elements, key: \.id, same: same,
                    sameSortKeys: sameSortKeys ?? { _, _ in false })
                return ListChange(elements: current.elements, difference: difference)
            },
            read: { context in ListChange(elements: try read(context), difference: ListDifference()) })
        observation.isDuplicate = { sameList($0.elements, $1.elements) }
        return observation
    }
}
