public import PersistenceCore

/// ``Person`` in schema version 2, as S8 migrates it with a mapping model: `score` transformed from points (a
/// `Double`) to whole hundredths of a point (an integer, rounded half up), `email` removed, and `karma` added with a
/// declared default. Stored under the same entity name, `Person`, with the same index on `name` — which the
/// migration rebuilds, since the table is rebuilt.
public struct MappedPerson: Entity, Hashable {
    /// The value every migrated record gets for ``karma``.
    public static let defaultKarma = 10

    public var id: Int64
    public var name: String
    public var age: Int
    /// Hundredths of a point: version 1's `score` (a `Double`) × 100, rounded half up.
    public var score: Int
    public var bio: String
    /// Added in version 2.
    public var karma: Int

    public static var entityName: String { "Person" }
    public static let indexes: [Index] = [.on("name")]
    public static let defaultValues: [String: Value] = ["karma": .integer(Int64(defaultKarma))]

    /// The raw migration's SQL for the transform, on a version-1 row: the same IEEE double arithmetic as
    /// ``scoreInHundredths(_:)`` (SQLite's `CAST` of a real truncates toward zero, as Swift's `Int(_:)` does).
    static let scoreInHundredthsSQL = #"CAST("score" * 100 + 0.5 AS INTEGER)"#

    public init(id: Int64, name: String, age: Int, score: Int, bio: String, karma: Int) {
        self.id = id
        self.name = name
        self.age = age
        self.score = score
        self.bio = bio
        self.karma = karma
    }

    /// A version-1 record as the migration maps it; `nil` when its score has no integer form (never for the
    /// generator's scores, 0 ..< 1,000).
    public init?(mapping person: Person, karma: Int = MappedPerson.defaultKarma) {
        guard let score = Self.scoreInHundredths(person.score) else { return nil }
        self.init(id: person.id, name: person.name, age: person.age, score: score, bio: person.bio, karma: karma)
    }

    /// The transform S8's mapping model applies to `score`: points to whole hundredths, rounded half up; `nil` for
    /// a value out of `Int`'s range (or not a number), which a mapping must refuse rather than trap on.
    public static func scoreInHundredths(_ points: Double) -> Int? {
        Int(exactly: (points * 100 + 0.5).rounded(.towardZero))
    }
}
