import Foundation
import PersistenceCore
import Testing

/// Recovering: all, by id, by key and value, by conditions with sort, limit and offset.
enum QueryChecks {
    static let all: [ConformanceCheck] = [
        .database("recovers all, by id and by key and value") { try basics($0) },
        .database("filters with every operator") { try operators($0) },
        .database("treats nil with two-valued logic") { try nilSemantics($0) },
        .database("sorts, limits and offsets") { try sortAndWindow($0) },
        .database("compares text by bytes, case-sensitively") { try textSemantics($0) },
        .database("filters on every attribute type") { try typedConditions($0) },
    ]

    /// Ada 36, Bob nil age, Cy 17, Dee 36, Eve 52 (emails for Ada, Cy, Eve).
    static func people() -> [Person] {
        [
            Person(id: 1, name: "Ada", email: "ada@example.com", age: 36, score: 9.5),
            Person(id: 2, name: "Bob", email: nil, age: nil, score: 3),
            Person(id: 3, name: "Cy", email: "cy@example.org", age: 17, score: 7.25),
            Person(id: 4, name: "Dee", email: nil, age: 36, score: 3),
            Person(id: 5, name: "Eve", email: "eve@example.com", age: 52, score: -1),
        ]
    }

    static func ids(_ db: some Database, _ condition: Condition, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> [Int64]
    {
        let found: [Person] = try db.recover(where: condition)
        return found.map(\.id)
    }

    static func basics(_ db: some Database) throws {
        #expect(try db.recover(Person.self).isEmpty)
        try db.create(people())
        let all: [Person] = try db.recover()
        #expect(all == people())
        #expect(try db.recover(Person.self, id: 3) == people()[2])
        #expect(try db.recover(Person.self, id: 99) == nil)
        let named: [Person] = try db.recover(key: "name", value: "Dee")
        #expect(named == [people()[3]])
        let aged: [Person] = try db.recover(key: "age", value: 36)
        #expect(aged.map(\.id) == [1, 4])
        let none: [Person] = try db.recover(key: "name", value: "Nobody")
        #expect(none.isEmpty)
        #expect(try db.count(Person.self) == 5)
        #expect(try db.count(Person.self, where: Field("age") == 36) == 2)
        let (name, count) = try db.read { context in
            (try context.recover(Person.self, id: 1)?.name, try context.count(Person.self))
        }
        #expect(name == "Ada")
        #expect(count == 5)
    }

    static func operators(_ db: some Database) throws {
        try db.create(people())
        #expect(try ids(db, Field("age") == 36) == [1, 4])
        #expect(try ids(db, Field("age") != 36) == [2, 3, 5])
        #expect(try ids(db, Field("age") < 36) == [3])
        #expect(try ids(db, Field("age") <= 36) == [1, 3, 4])
        #expect(try ids(db, Field("age") > 36) == [5])
        #expect(try ids(db, Field("age") >= 36) == [1, 4, 5])
        #expect(try ids(db, Field("score") > 3.1) == [1, 3])
        #expect(try ids(db, Field("age") > 35.5) == [1, 4, 5], "integers compare numerically with reals")
        #expect(try ids(db, Field("name").in(["Bob", "Eve", "Zed"])) == [2, 5])
        #expect(try ids(db, Field("name").in([String]())) == [])
        #expect(try ids(db, Field("email").contains("example.com")) == [1, 5])
        #expect(try ids(db, Field("name").hasPrefix("D")) == [4])
        #expect(try ids(db, Field("email").isNull) == [2, 4])
        #expect(try ids(db, Field("email").isNotNull) == [1, 3, 5])
        #expect(try ids(db, Field("age") == 36 && Field("email") != nil) == [1])
        #expect(try ids(db, Field("age") < 18 || Field("age") > 50) == [3, 5])
        #expect(try ids(db, !(Field("age") == 36)) == [2, 3, 5])
        #expect(try ids(db, .and([])) == [1, 2, 3, 4, 5])
        #expect(try ids(db, .or([])) == [])
        #expect(try ids(db, (Field("name") == "Ada" || Field("name") == "Bob") && !(Field("score") < 5)) == [1])
    }

    static func nilSemantics(_ db: some Database) throws {
        try db.create(people())
        #expect(try ids(db, Field("age") == nil) == [2])
        #expect(try ids(db, Field("email") != "ada@example.com") == [2, 3, 4, 5], "!= keeps nil, as Swift does")
        #expect(try ids(db, Field("age") < 100) == [1, 3, 4, 5], "ordering comparisons never match nil")
        #expect(try ids(db, !(Field("age") < 100)) == [2], "NOT is two-valued: the nil age matches")
        #expect(try ids(db, !Field("email").contains("example")) == [2, 4])
        #expect(try ids(db, !Field("email").hasPrefix("ada")) == [2, 3, 4, 5])
        #expect(try ids(db, .oneOf("email", [.null, .text("cy@example.org")])) == [2, 3, 4])
        #expect(try ids(db, !Field("email").in(["cy@example.org"])) == [1, 2, 4, 5])
    }

    static func sortAndWindow(_ db: some Database) throws {
        try db.create(people())
        func sorted(_ sort: [Sort], limit: Int? = nil, offset: Int = 0) throws -> [Int64] {
            let found: [Person] = try db.recover(sortedBy: sort, limit: limit, offset: offset)
            return found.map(\.id)
        }
        #expect(try sorted([.ascending("age")]) == [2, 3, 1, 4, 5], "nil first ascending, ties by primary key")
        #expect(try sorted([.descending("age")]) == [5, 1, 4, 3, 2], "nil last descending, ties by primary key")
        #expect(try sorted([.ascending("score"), .descending("name")]) == [5, 4, 2, 3, 1])
        #expect(try sorted([.descending("id")]) == [5, 4, 3, 2, 1])
        #expect(try sorted([.ascending("name")], limit: 2) == [1, 2])
        #expect(try sorted([.ascending("name")], limit: 2, offset: 2) == [3, 4])
        #expect(try sorted([.ascending("name")], offset: 4) == [5])
        #expect(try sorted([.ascending("name")], offset: 10) == [])
        #expect(try sorted([], limit: 0) == [])
        let page: [Person] = try db.recover(
            where: Field("age") != nil, sortedBy: [.descending("score")], limit: 2, offset: 1)
        #expect(page.map(\.id) == [3, 4])
    }

    static func textSemantics(_ db: some Database) throws {
        let names = ["apple", "Apple", "APPLE", "é", "e\u{301}", "Zebra", "zebra", "a", ""]
        try db.create(names.enumerated().map { Person(id: Int64($0 + 1), name: $1) })
        #expect(try ids(db, Field("name") == "apple") == [1], "equality is case-sensitive")
        #expect(try ids(db, Field("name") == "é") == [4], "composed and decomposed forms are different text")
        #expect(try ids(db, Field("name") == "e\u{301}") == [5])
        #expect(try ids(db, Field("name").hasPrefix("A")) == [2, 3])
        #expect(try ids(db, Field("name").contains("pp")) == [1, 2])
        #expect(try ids(db, Field("name").hasPrefix("")) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        let ordered: [Person] = try db.recover(sortedBy: [.ascending("name")])
        #expect(
            ordered.map(\.name) == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) },
            "text sorts by UTF-8 bytes")
        #expect(try ids(db, Field("name") < "a") == [2, 3, 6, 9])
    }

    static func typedConditions(_ db: some Database) throws {
        var first = AllTypes.sample(id: 1)
        first.bool = false
        first.date = Date(timeIntervalSinceReferenceDate: 100)
        first.mood = .sad
        var second = AllTypes.sample(id: 2)
        second.date = Date(timeIntervalSinceReferenceDate: 200)
        second.optionalUUID = UUID()
        try db.create([first, second])
        func found(_ condition: Condition) throws -> [Int64] {
            let records: [AllTypes] = try db.recover(where: condition)
            return records.map(\.id)
        }
        #expect(try found(Field("bool") == true) == [2])
        #expect(try found(Field("date") > Date(timeIntervalSinceReferenceDate: 150)) == [2])
        #expect(try found(Field("mood") == AllTypes.Mood.sad) == [1])
        #expect(try found(Field("level") == AllTypes.Level.high) == [1, 2])
        #expect(try found(Field("uuid") == second.uuid) == [2])
        #expect(try found(Field("optionalUUID") == second.optionalUUID) == [2])
        #expect(try found(Field("data") == Data([1, 2, 3])) == [1, 2])
        #expect(try found(Field("url") == first.url) == [1, 2])
        #expect(try found(Field("address").isNull) == [])
        #expect(try found(Field("optionalAddress").isNull) == [1, 2])
        #expect(try found(Field("uint8") == 8) == [1, 2])
    }
}
