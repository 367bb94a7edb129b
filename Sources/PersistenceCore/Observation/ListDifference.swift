/// How a list of records changed between two reads, by position: records deleted and inserted, records that moved,
/// records whose content changed — what a table or collection view animates.
///
/// Records are matched by primary key. Offsets follow UIKit's batch updates and `CollectionDifference`: a deletion
/// is an offset in the old list, an insertion an offset in the new one, a move and an update carry both. Moves are
/// as few as can be: the records that kept their order relative to each other (a longest run of them) stay, the
/// others move. Of the longest runs, the one kept prefers records whose sort keys didn't change — so that the records
/// whose sort keys changed are the ones that move — then records whose content didn't change. An update is a record
/// in both lists whose content changed — a moved record too, so it is in both ``moves`` and ``updates`` then.
///
/// ```swift
/// for try await change in ValueObservation.records(Todo.self, sortedBy: [.ascending("due")]).differences().values(in: db) {
///     tableView.performBatchUpdates {
///         tableView.deleteRows(at: change.difference.deletions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         tableView.insertRows(at: change.difference.insertions.map { IndexPath(row: $0, section: 0) }, with: .fade)
///         for move in change.difference.moves {
///             tableView.moveRow(at: IndexPath(row: move.old, section: 0), to: IndexPath(row: move.new, section: 0))
///         }
///     }
///     tableView.reconfigureRows(at: change.difference.updates.map { IndexPath(row: $0.new, section: 0) })
/// }
/// ```
///
/// ``applied(to:new:)`` turns the old list into the new one with the difference alone, which is what the offsets
/// mean.
public struct ListDifference: Sendable, Hashable {
    /// A record's offset in the old list and in the new one.
    public struct Offsets: Sendable, Hashable {
        /// The offset in the old list.
        public var old: Int
        /// The offset in the new list.
        public var new: Int

        /// Creates a pair of offsets.
        public init(old: Int, new: Int) {
            self.old = old
            self.new = new
        }
    }

    /// Offsets in the old list of records that aren't in the new one, ascending.
    public var deletions: [Int]
    /// Offsets in the new list of records that weren't in the old one, ascending.
    public var insertions: [Int]
    /// Records in both lists that changed place relative to the others, by new offset ascending.
    public var moves: [Offsets]
    /// Records in both lists whose content changed (moved or not), by new offset ascending.
    public var updates: [Offsets]

    /// Creates a difference.
    public init(deletions: [Int] = [], insertions: [Int] = [], moves: [Offsets] = [], updates: [Offsets] = []) {
        self.deletions = deletions
        self.insertions = insertions
        self.moves = moves
        self.updates = updates
    }

    /// Whether the lists hold the same records, in the same order, with the same content.
    public var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && moves.isEmpty && updates.isEmpty }

    /// The difference between two lists of uniquely keyed elements — the algorithm observations use, for lists of
    /// your own.
    ///
    /// ```swift
    /// let difference = ListDifference(
    ///     from: oldRows, to: newRows, key: \.id, same: ==, sameSortKeys: { $0.rank == $1.rank })
    /// ```
    ///
    /// - Parameters:
    ///   - old: The list before; keys are unique in it.
    ///   - new: The list after; keys are unique in it.
    ///   - key: What matches an element of `old` with one of `new`.
    ///   - same: Whether two elements with the same key have the same content (an update otherwise).
    ///   - sameSortKeys: Whether two elements with the same key have the same sort keys — the values the list is
    ///     ordered by. When the same number of moves can be made with other records, the ones whose sort keys
    ///     changed are the ones that move. By default no record is known to have kept its sort keys (the list's
    ///     order isn't known): `same` alone breaks ties.
    public init<T, Key: Hashable>(
        from old: [T], to new: [T], key: (T) -> Key, same: (_ old: T, _ new: T) -> Bool,
        sameSortKeys: (_ old: T, _ new: T) -> Bool = { _, _ in false }
    ) {
        var oldOffsets: [Key: Int] = [:]
        oldOffsets.reserveCapacity(old.count)
        for (offset, element) in old.enumerated() { oldOffsets[key(element)] = offset }
        var kept: [Offsets] = []
        var insertions: [Int] = []
        var newKeys = Set<Key>()
        newKeys.reserveCapacity(new.count)
        for (offset, element) in new.enumerated() {
            let elementKey = key(element)
            newKeys.insert(elementKey)
            if let oldOffset = oldOffsets[elementKey] {
                kept.append(Offsets(old: oldOffset, new: offset))
            } else {
                insertions.append(offset)
            }
        }
        let deletions = old.indices.filter { !newKeys.contains(key(old[$0])) }
        let unchanged = kept.map { same(old[$0.old], new[$0.new]) }
        // Which records would rather stay: those whose sort keys didn't change first, then those whose content
        // didn't (a record whose content is the same has the same sort keys).
        let sameKeys = zip(kept, unchanged).map { offsets, unchanged in
            unchanged || sameSortKeys(old[offsets.old], new[offsets.new])
        }
        let staying = Self.longestIncreasingRun(
            kept.map(\.old), below: old.count, preferring: sameKeys, then: unchanged)
        var moves: [Offsets] = []
        var updates: [Offsets] = []
        for (index, offsets) in kept.enumerated() {
            if !staying.contains(index) { moves.append(offsets) }
            if !unchanged[index] { updates.append(offsets) }
        }
        self.init(deletions: deletions, insertions: insertions, moves: moves, updates: updates)
    }

    /// The difference between two lists of identified, comparable elements: matched by `id`, updated when not
    /// `==`; the elements whose `sortKey` changed are the ones that move, when the same number of moves can be made
    /// with others.
    ///
    /// ```swift
    /// let difference = ListDifference(from: oldTodos, to: newTodos, sortKey: \.due)
    /// ```
    public init<T: Identifiable & Equatable, SortKey: Equatable>(
        from old: [T], to new: [T], sortKey: (T) -> SortKey
    ) {
        self.init(from: old, to: new, key: \.id, same: ==, sameSortKeys: { sortKey($0) == sortKey($1) })
    }

    /// The difference between two lists of identified, comparable elements: matched by `id`, updated when not `==`.
    public init<T: Identifiable & Equatable>(from old: [T], to new: [T]) {
        self.init(from: old, to: new, key: \.id, same: ==)
    }

    /// The positions in `values` (distinct, each below `bound`) of a longest strictly increasing subsequence — of
    /// those, one with the most positions `preferring` marks, and of those one with the most that `then` marks.
    /// O(n log n), with a Fenwick tree of best runs by value.
    private static func longestIncreasingRun(
        _ values: [Int], below bound: Int, preferring: [Bool], then: [Bool]
    ) -> Set<Int> {
        var tree = [(score: RunScore, position: Int)](repeating: (RunScore(), -1), count: bound + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var best = (score: RunScore(), position: -1)
        for (position, value) in values.enumerated() {
            // The best run ending in a value below this one: the tree's prefix 1...value.
            var top = (score: RunScore(), position: -1)
            var node = value
            while node > 0 {
                if top.score < tree[node].score { top = tree[node] }
                node -= node & -node
            }
            var score = top.score
            score.length += 1
            if preferring[position] { score.preferred += 1 }
            if then[position] { score.next += 1 }
            previous[position] = top.position
            if best.score < score { best = (score, position) }
            node = value + 1
            while node <= bound {
                if tree[node].score < score { tree[node] = (score, position) }
                node += node & -node
            }
        }
        var run = Set<Int>()
        var position = best.position
        while position >= 0 {
            run.insert(position)
            position = previous[position]
        }
        return run
    }

    /// The old list changed by this difference: deleted and moved records removed, inserted ones placed, moved ones
    /// placed again, updated ones replaced. Only the new list's inserted and updated elements are read from `new`:
    /// the result equals `new` exactly when the difference is `new`'s difference from `old`.
    ///
    /// ```swift
    /// rows = change.difference.applied(to: rows, new: change.elements)
    /// ```
    public func applied<T>(to old: [T], new: [T]) -> [T] {
        var result = old
        let removed = Set(deletions).union(moves.map(\.old))
        for offset in removed.sorted(by: >) where result.indices.contains(offset) { result.remove(at: offset) }
        var placed: [(offset: Int, element: T)] = []
        placed.reserveCapacity(insertions.count + moves.count)
        for offset in insertions where new.indices.contains(offset) { placed.append((offset, new[offset])) }
        for move in moves where old.indices.contains(move.old) { placed.append((move.new, old[move.old])) }
        placed.sort { $0.offset < $1.offset }
        for (offset, element) in placed { result.insert(element, at: min(offset, result.count)) }
        for update in updates where result.indices.contains(update.new) && new.indices.contains(update.new) {
            result[update.new] = new[update.new]
        }
        return result
    }
}

/// How good a run of records that stay is: longer first, then with more preferred records, then more of the next
/// preference.
private struct RunScore: Comparable {
    var length = 0
    var preferred = 0
    var next = 0

    static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.length, lhs.preferred, lhs.next) < (rhs.length, rhs.preferred, rhs.next)
    }
}
