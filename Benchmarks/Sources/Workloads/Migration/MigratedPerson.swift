public import PersistenceCore

/// ``Person`` in schema version 2, as M2 migrates it: `bio` renamed `about`, and `karma` added with a declared
/// default. Stored under the same entity name, `Person`, with the same index on `name`.
public struct MigratedPerson: Entity, Hashable {
    /// The value every migrated record gets for ``karma``.
    public static let defaultKarma = 10

    public var id: Int64
    public var name: String
    public var email: String
    public var age: Int
    public var score: Double
    /// `bio` in version 1.
    public var about: String
    /// Added in version 2.
    public var karma: Int

    public static var entityName: String { "Person" }
    public static let indexes: [Index] = [.on("name")]
    public static let defaultValues: [String: Value] = ["karma": .integer(Int64(defaultKarma))]

    public init(id: Int64, name: String, email: String, age: Int, score: Double, about: String, karma: Int) {
        self.id = id
        self.name = name
        self.email = email
        self.age = age
        self.score = score
        self.about = about
        self.karma = karma
    }

    /// A version-1 record as the migration rewrites it: `bio` becomes `about`, `karma` takes `karma`.
    public init(migrating person: Person, karma: Int = MigratedPerson.defaultKarma) {
        self.init(
            id: person.id, name: person.name, email: person.email, age: person.age, score: person.score,
            about: person.bio, karma: karma)
    }

    /// The version-1 record this one was migrated from (``karma`` aside), for checksums against the generator.
    public var original: Person {
        Person(id: id, name: name, email: email, age: age, score: score, bio: about)
    }
}
