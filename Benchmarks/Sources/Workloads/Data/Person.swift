public import PersistenceCore

/// The one record every workload stores: a few short texts, two numbers, an indexed name.
///
/// Stored by the library as is; the raw baselines write the same fields to the same schema (SQLite) or to a compact
/// hand-written encoding (LMDB), and decode them back into a `Person` so every implementation does the same work.
///
/// It reads and writes its own records (``init(record:)``, ``encode(to:)``), as an app that wants the last bit of
/// speed would; without them it would go through `Codable`'s keyed containers (see the README's performance notes).
public struct Person: Entity, Hashable {
    public var id: Int64
    /// About 12 characters; shared by ``Dataset/peoplePerName`` records.
    public var name: String
    /// About 24 characters.
    public var email: String
    public var age: Int
    public var score: Double
    /// About 100 characters.
    public var bio: String

    public static let indexes: [Index] = [.on("name")]

    public init(id: Int64, name: String, email: String, age: Int, score: Double, bio: String) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
        self.bio = bio
    }

    public init(record: AttributeReader) throws {
        id = try record.decode("id")
        name = try record.decode("name")
        email = try record.decode("email")
        age = try record.decode("age")
        score = try record.decode("score")
        bio = try record.decode("bio")
    }

    public func encode(to record: AttributeWriter) throws {
        try record.encode(id, for: "id")
        try record.encode(name, for: "name")
        try record.encode(email, for: "email")
        try record.encode(age, for: "age")
        try record.encode(score, for: "score")
        try record.encode(bio, for: "bio")
    }

    /// The record as S5 rewrites it: a different age and score, the texts unchanged.
    public var updated: Person {
        var person = self
        person.age = (age + 7) % 100
        person.score = score + 0.5
        return person
    }
}
