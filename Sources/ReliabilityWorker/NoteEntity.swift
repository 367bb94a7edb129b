import PersistenceCore

/// The records of the bit-flip store: every field follows from the id, so a probe knows what each must be.
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var tag: String
    var score: Double
    static let indexes: [Index] = [.on("tag")]

    static let tags = 10

    static func expected(_ id: Int64) -> Note {
        Note(
            id: id, title: "note \(id) " + String(repeating: "abc", count: Int(id % 40)), tag: tag(id),
            score: Double(id) * 1.5)
    }

    static func tag(_ id: Int64) -> String { "t\(id % Int64(tags))" }
}
