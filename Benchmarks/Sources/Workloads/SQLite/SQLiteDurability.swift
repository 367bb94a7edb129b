/// Every SQLite implementation commits with the same durability: WAL, `synchronous = FULL` (an fsync of the WAL
/// at every commit). Each checks its writer connection at open, since a library may quietly choose otherwise.
enum SQLiteDurability {
    /// `PRAGMA synchronous` reads 2 for FULL.
    static let full = 2

    struct Mismatch: Error, CustomStringConvertible {
        var implementation: String
        var level: Int?
        var description: String {
            "\(implementation) writes with synchronous = \(level.map(String.init) ?? "unknown"), not FULL (2): "
                + "the comparison would be unfair"
        }
    }

    static func check(_ level: Int?, _ implementation: String) throws {
        guard level == full else { throw Mismatch(implementation: implementation, level: level) }
    }
}
