/// Every SQLite implementation commits with the same durability: WAL, `synchronous = FULL` (an fsync of the WAL
/// at every commit). Each checks its writer connection at open, since a library may quietly choose otherwise.
enum SQLiteDurability {
    /// `PRAGMA synchronous` reads 2 for FULL.
    static let full = 2
    /// `PRAGMA synchronous` reads 1 for NORMAL (in WAL mode, no fsync at commit: only O1 and O2 use it, on a store
    /// of their own, to time commits without the disk).
    static let normal = 1

    struct Mismatch: Error, CustomStringConvertible {
        var implementation: String
        var level: Int?
        var expected = SQLiteDurability.full
        var description: String {
            "\(implementation) writes with synchronous = \(level.map(String.init) ?? "unknown"), not "
                + (expected == SQLiteDurability.full ? "FULL" : "NORMAL") + " (\(expected)): "
                + "the comparison would be unfair"
        }
    }

    static func check(_ level: Int?, _ implementation: String, expected: Int = full) throws {
        guard level == expected else {
            throw Mismatch(implementation: implementation, level: level, expected: expected)
        }
    }
}
