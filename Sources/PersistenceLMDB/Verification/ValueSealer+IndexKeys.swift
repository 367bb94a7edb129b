import Foundation
import PersistenceCore

extension ValueSealer {
    /// The key of a record's entry in `index`, or `nil` when an indexed value is `nil`: such records aren't
    /// indexed (`nil`s never collide in unique indexes, and lookups by `nil` scan).
    ///
    /// The one definition of what an index holds for a record: writes file entries under it, and verification
    /// recomputes it to check them, so the two can't drift.
    func indexKey(of values: [Value], in index: EntityStore.IndexStore) -> Data? {
        let indexed = index.positions.map { values[$0] }
        guard !indexed.contains(where: \.isNull) else { return nil }
        return indexKey(indexed)
    }
}
