import Testing

@testable import PersistenceCore

/// The difference between two keyed lists: applying it to the old list gives the new one, with as few moves as can
/// be, over randomized edits.
struct ListDifferenceTests {
    struct Row: Equatable {
        var id: Int
        var text: String
    }

    static func difference(_ old: [Row], _ new: [Row]) -> ListDifference {
        ListDifference(from: old, to: new, key: \.id, same: ==)
    }

    @Test func namesEachKindOfChangeByPosition() {
        let old = [Row(id: 1, text: "a"), Row(id: 2, text: "b"), Row(id: 3, text: "c"), Row(id: 4, text: "d")]
        let new = [Row(id: 5, text: "e"), Row(id: 3, text: "c"), Row(id: 1, text: "a!"), Row(id: 4, text: "d")]
        let difference = Self.difference(old, new)
        #expect(difference.deletions == [1])
        #expect(difference.insertions == [0])
        // 3 and 1 swapped: the one whose content changed is the one that moves.
        #expect(difference.moves == [.init(old: 0, new: 2)])
        #expect(difference.updates == [.init(old: 0, new: 2)])
        #expect(difference.applied(to: old, new: new) == new)
        #expect(Self.difference(new, new).isEmpty)
        #expect(Self.difference([], new) == ListDifference(insertions: [0, 1, 2, 3]))
        #expect(Self.difference(old, []) == ListDifference(deletions: [0, 1, 2, 3]))
    }

    @Test func aRecordMovedFarIsTheOnlyMove() {
        let old = (0..<6).map { Row(id: $0, text: "") }
        let new = [old[5]] + old[0..<5]
        #expect(Self.difference(old, new).moves == [.init(old: 5, new: 0)])
    }

    struct Item: Identifiable, Equatable {
        var id: Int
        var rank: Int
        var label = ""
    }

    @Test func theRecordWhoseSortKeyChangedMovesPastANeighbourWhoseContentChanged() {
        // [2 (rank 10), 1 (rank 20)] → 1 to rank 5 and 2's label: 1 moves to the front, 2 didn't move.
        let old = [Item(id: 2, rank: 10), Item(id: 1, rank: 20)]
        let new = [Item(id: 1, rank: 5), Item(id: 2, rank: 10, label: "edited")]
        let difference = ListDifference(from: old, to: new, sortKey: \.rank)
        #expect(difference.moves == [.init(old: 1, new: 0)])
        #expect(difference.updates == [.init(old: 1, new: 0), .init(old: 0, new: 1)])
        #expect(difference.applied(to: old, new: new) == new)
        // Without sort keys, content alone can't tell them apart: one of them moves.
        #expect(ListDifference(from: old, to: new).moves.count == 1)
    }

    @Test(arguments: [UInt64(4), 5, 6, 77])
    func ofEquallyFewMovesTheRecordsWhoseSortKeysChangedMove(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var list: [Item] = []
        var nextID = 0
        for round in 0..<300 {
            var new = list.filter { _ in Int.random(in: 0..<10, using: &random) != 0 }
            for index in new.indices {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: new[index].rank = Int.random(in: 0..<12, using: &random)
                case 1: new[index].label += "'"
                case 2:
                    new[index].rank = Int.random(in: 0..<12, using: &random)
                    new[index].label += "*"
                default: break
                }
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                new.append(Item(id: nextID, rank: Int.random(in: 0..<12, using: &random)))
                nextID += 1
            }
            new.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
            let difference = ListDifference(from: list, to: new, sortKey: \.rank)
            #expect(difference.applied(to: list, new: new) == new, "seed \(seed), round \(round)")
            let (fewest, movedKeepingKeys) = Self.bestMoves(list, new)
            #expect(difference.moves.count == fewest, "seed \(seed), round \(round)")
            let moved = difference.moves.map { new[$0.new] }
            let keptKeys = moved.filter { item in list.contains { $0.id == item.id && $0.rank == item.rank } }
            #expect(keptKeys.count == movedKeepingKeys, "seed \(seed), round \(round): \(difference.moves)")
            list = new
        }
    }

    /// The fewest moves, and of those the fewest records moved whose rank didn't change: the quadratic recurrence
    /// over (run length, records in it whose rank didn't change).
    static func bestMoves(_ old: [Item], _ new: [Item]) -> (moves: Int, movedKeepingKeys: Int) {
        let kept = new.compactMap { item in old.firstIndex { $0.id == item.id }.map { ($0, old[$0].rank == item.rank) }
        }
        var runs: [(length: Int, keys: Int)] = []
        for index in kept.indices {
            let before = kept.indices.prefix(index).filter { kept[$0].0 < kept[index].0 }.map { runs[$0] }
            let best = before.max { ($0.length, $0.keys) < ($1.length, $1.keys) } ?? (0, 0)
            runs.append((best.length + 1, best.keys + (kept[index].1 ? 1 : 0)))
        }
        let best = runs.max { ($0.length, $0.keys) < ($1.length, $1.keys) } ?? (0, 0)
        return (kept.count - best.length, kept.filter(\.1).count - best.keys)
    }

    @Test func aDifferenceMadeByHandThatDoesNotFitIsAppliedWithoutTrapping() {
        let bogus = ListDifference(
            deletions: [7], insertions: [9], moves: [.init(old: 3, new: 8)], updates: [.init(old: 0, new: 5)])
        #expect(bogus.applied(to: [1, 2], new: [3]) == [1, 2])
    }

    @Test(arguments: [UInt64(1), 2, 3, 33, 1_000])
    func applyingTheDifferenceGivesTheNewList(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var list: [Row] = []
        var nextID = 0
        for round in 0..<200 {
            var new = list.filter { _ in Int.random(in: 0..<8, using: &random) != 0 }
            for index in new.indices where Int.random(in: 0..<6, using: &random) == 0 { new[index].text += "'" }
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                new.insert(Row(id: nextID, text: ""), at: Int.random(in: 0...new.count, using: &random))
                nextID += 1
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) where new.count > 1 {
                let row = new.remove(at: Int.random(in: 0..<new.count, using: &random))
                new.insert(row, at: Int.random(in: 0...new.count, using: &random))
            }
            let difference = Self.difference(list, new)
            // Only inserted and updated rows may be read from the new list.
            let readable = Set(difference.insertions).union(difference.updates.map(\.new))
            let masked = new.indices.map { readable.contains($0) ? new[$0] : Row(id: -1, text: "unread") }
            #expect(difference.applied(to: list, new: masked) == new, "seed \(seed), round \(round)")
            #expect(difference.moves.count == Self.fewestMoves(list, new), "seed \(seed), round \(round)")
            list = new
        }
    }

    /// Kept records minus a longest run of them in their old order, by the quadratic recurrence.
    static func fewestMoves(_ old: [Row], _ new: [Row]) -> Int {
        let keptOld = new.compactMap { row in old.firstIndex { $0.id == row.id } }
        var runs: [Int] = []
        for index in keptOld.indices {
            let before = keptOld.indices.prefix(index).filter { keptOld[$0] < keptOld[index] }.map { runs[$0] }
            runs.append(1 + (before.max() ?? 0))
        }
        return keptOld.count - (runs.max() ?? 0)
    }
}
