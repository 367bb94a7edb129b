public import Foundation
import PersistenceCore
import PersistenceMacros

/// One of the Realm-vs-SwiftData suite's simple objects: a user with a UUID primary key, a first name, a surname and
/// an age (the suite's `RealmUser` / `SwiftUser`).
public struct SuiteUserRow: Sendable, Hashable {
    public var id: UUID
    public var firstName: String
    public var surname: String
    public var age: Int
}

/// The suite's user as an app writes it for us: `@Entity`, no index on `firstName` (the suite's first fetch).
@Entity
struct SuiteUser: SuiteUserColumns {
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    static let entityName = "User"
}

/// The same entity in the model's next version: `firstName` indexed (the suite's fetch "with an index"). Opening a
/// store of ``SuiteUser`` with it is an inferred migration that builds the index.
@Entity
struct IndexedSuiteUser: SuiteUserColumns {
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int
    static let entityName = "User"
    static let indexes: [Index] = [.on("firstName")]
}

/// A record type whose stored properties are the suite's columns, by the same names: it converts to and from the
/// plain row through its memberwise initializer.
protocol SuiteUserColumns: Sendable {
    var id: UUID { get }
    var firstName: String { get set }
    var surname: String { get }
    var age: Int { get }
    init(id: UUID, firstName: String, surname: String, age: Int)
}

extension SuiteUserColumns {
    init(_ row: SuiteUserRow) { self.init(id: row.id, firstName: row.firstName, surname: row.surname, age: row.age) }
    var row: SuiteUserRow { SuiteUserRow(id: id, firstName: firstName, surname: surname, age: age) }
}

/// RS1's data: `count` users from a fixed seed — UUIDs from the generator, first names and surnames drawn from lists
/// of 200 each (one of the first names is "Jane", none is "Wendy"), ages 0–98 — and what each phase must find.
public struct SuiteUsersInput: Sendable {
    /// The suite's size: a million simple objects.
    public static let fullCount = 1_000_000
    /// The name the suite fetches, and the one it renames those users to.
    static let fetchedName = "Jane"
    static let newName = "Wendy"

    public let users: [SuiteUserRow]
    /// The ids of the users named ``fetchedName``.
    let janes: Set<UUID>

    public init(count: Int) {
        var generator = SplitMix64(seed: 0x5245_414C_4D)
        let firstNames = Self.names(200, seed: 1, including: Self.fetchedName, excluding: Self.newName)
        let surnames = Self.names(200, seed: 2, including: "Bartlett", excluding: Self.newName)
        users = (0..<Swift.max(1, count)).map { _ in
            let bits = (generator.next(), generator.next())
            let id = withUnsafeBytes(of: bits) { bytes in
                UUID(uuid: bytes.load(as: uuid_t.self))
            }
            return SuiteUserRow(
                id: id, firstName: firstNames[generator.next(below: firstNames.count)],
                surname: surnames[generator.next(below: surnames.count)], age: generator.next(below: 99))
        }
        janes = Set(users.lazy.filter { $0.firstName == Self.fetchedName }.map(\.id))
    }

    /// `count` distinct capitalised names of 3–10 letters, `including` one of them and never `excluding`.
    private static func names(_ count: Int, seed: UInt64, including: String, excluding: String) -> [String] {
        var generator = SplitMix64(seed: seed)
        var names: Set<String> = [including]
        while names.count < count {
            let length = 3 + generator.next(below: 8)
            let letters = (0..<length).map { index in
                Character(UnicodeScalar(UInt8((index == 0 ? 65 : 97) + generator.next(below: 26))))
            }
            let name = String(letters)
            if name != excluding { names.insert(name) }
        }
        return names.sorted()
    }

    /// Checks a fetch of the users named `name`: exactly the expected ones, in ascending age.
    func check(_ fetched: [SuiteUserRow], named name: String, _ verify: Verifier) throws {
        try verify.expect(fetched.count == janes.count, "\(fetched.count) users named \(name), not \(janes.count)")
        try verify.expect(fetched.allSatisfy { $0.firstName == name }, "a fetched user isn't named \(name)")
        try verify.expect(zip(fetched, fetched.dropFirst()).allSatisfy { $0.age <= $1.age }, "not in age order")
        try verify.expect(Set(fetched.map(\.id)) == janes, "the fetched users aren't the expected ones")
    }
}
