/// How a list of records changed between two reads, by position: records deleted and inserted, records that moved,
/// records whose content changed — what a table or collection view animates.
///
/// Records are matched by primary key. Offsets follow UIKit's batch updates and `CollectionDifference`: a deletion
/// is an offset in the old list, an insertion an offset in the new one, a move and an update carry both. Moves are
/// as few as can be: the records that kept their order relative to each other (a longest run of them, preferring
/// records whose content didn't change) stay, the others move. An update is a record in both lists whose content changed — a moved record too, so it is in both
/// ``moves`` and ``updates`` then.
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

    /// The difference between two lists of uniquely keyed elements: `same` tells whether an element of `old` and
    /// one of `new` with the same key have the same content.
    package init<T, Key: Hashable>(
        from old: [T], to new: [T], key: (T) -> Key, same: (_ old: T, _ new: T) -> Bool
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
        let staying = Self.longestIncreasingRun(kept.map(\.old), below: old.count, preferring: unchanged)
        var moves: [Offsets] = []
        var updates: [Offsets] = []
        for (index, offsets) in kept.enumerated() {
            if !staying.contains(index) { moves.append(offsets) }
            if !unchanged[index] { updates.append(offsets) }
        }
        self.init(deletions: deletions, insertions: insertions, moves: moves, updates: updates)
    }

    /// The positions in `values` (distinct, each below `bound`) of a longest strictly increasing subsequence — of
    /// those, one with the most positions `preferring` marks: records that kept their content stay, and the ones
    /// whose sort keys changed are the ones that move. O(n log n), with a Fenwick tree of best runs by value.
    private static func longestIncreasingRun(_ values: [Int], below bound: Int, preferring: [Bool]) -> Set<Int> {
        // A run's score: its length first (in units above any number of preferred positions), then how many it
        // prefers.
        let unit = values.count + 1
        var tree = [(score: Int, position: Int)](repeating: (0, -1), count: bound + 1)
        var previous = [Int](repeating: -1, count: values.count)
        var best = (score: 0, position: -1)
        for (position, value) in values.enumerated() {
            // The best run ending in a value below this one: the tree's prefix 1...value.
            var top = (score: 0, position: -1)
            var node = value
            while node > 0 {
                if tree[node].score > top.score { top = tree[node] }
                node -= node & -node
            }
            let score = top.score + unit + (preferring[position] ? 1 : 0)
            previous[position] = top.position
            if score > best.score { best = (score, position) }
            node = value + 1
            while node <= bound {
                if score > tree[node].score { tree[node] = (score, position) }
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
