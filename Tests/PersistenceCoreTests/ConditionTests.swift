import Foundation
@_spi(PersistenceBackend) import PersistenceCore
import Testing

/// One attribute of each kind conditions treat differently.
struct ConditionPerson: Entity {
    var id: Int64
    var name: String
    var nickname: String?
    var age: Int?
    var score: Double
    var joined: Date
    var active: Bool
    var avatar: Data?
    var homepage: URL?
    var token: UUID?
    var tags: [String]
}

/// A condition that must fail to resolve, with the error code it must fail with.
struct ConditionFailure: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var condition: Condition
    var code: PersistenceError.Code
}

/// A condition, a row (attributes not named are nil) and whether the row matches.
struct ConditionMatch: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var condition: Condition
    var row: [String: Value]
    var expected: Bool
}

/// An offset/limit window over five records sorted by key, and the keys it returns.
struct ConditionWindow: Sendable, CustomTestStringConvertible {
    var offset: Int
    var limit: Int?
    var ids: [Int64]
    var testDescription: String { "offset \(offset), limit \(limit.map(String.init) ?? "none")" }
}

@Suite("Conditions and queries")
struct ConditionTests {
    static func layout() throws -> RecordLayout { try SchemaCache.layout(for: ConditionPerson.self) }

    /// The values of a row in layout order; attributes not given are nil.
    static func row(_ values: [String: Value], in layout: RecordLayout) throws -> [Value] {
        var record = Record(layout: layout)
        for (name, value) in values { try record.set(name, to: value) }
        return record.values
    }

    // MARK: - Resolution errors

    static let failures: [ConditionFailure] = [
        ConditionFailure(testDescription: "unknown attribute", condition: Field("nope") == 1, code: .unknownAttribute),
        ConditionFailure(
            testDescription: "SQL injection with a double quote", condition: Field("name\"; DROP TABLE x; --") == "x",
            code: .unknownAttribute),
        ConditionFailure(
            testDescription: "SQL injection with a single quote", condition: Field("name' OR '1'='1") == "x",
            code: .unknownAttribute),
        ConditionFailure(testDescription: "empty name", condition: Field("") == 1, code: .unknownAttribute),
        ConditionFailure(testDescription: "wrong case", condition: Field("Name") == "x", code: .unknownAttribute),
        ConditionFailure(
            testDescription: "trailing space", condition: Field("name ") == "x", code: .unknownAttribute),
        ConditionFailure(testDescription: "unknown isNull", condition: Field("nope").isNull, code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown contains", condition: Field("nope").contains("x"), code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown hasPrefix", condition: Field("nope").hasPrefix("x"), code: .unknownAttribute),
        ConditionFailure(testDescription: "unknown in", condition: Field("nope").in([1, 2]), code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown inside and", condition: Field("name") == "x" && Field("nope") == 1,
            code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown inside or", condition: Field("name") == "x" || Field("nope") == 1,
            code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown inside not", condition: !(Field("nope") == 1), code: .unknownAttribute),
        ConditionFailure(
            testDescription: "unknown deep inside", condition: .and([.or([.not(.isNull("nope"))])]),
            code: .unknownAttribute),
        ConditionFailure(testDescription: "text == integer", condition: Field("name") == 1, code: .typeMismatch),
        ConditionFailure(testDescription: "text < real", condition: Field("name") < 1.5, code: .typeMismatch),
        ConditionFailure(testDescription: "integer == text", condition: Field("age") == "1", code: .typeMismatch),
        ConditionFailure(testDescription: "integer == blob", condition: Field("age") == Data(), code: .typeMismatch),
        ConditionFailure(testDescription: "bool == text", condition: Field("active") == "true", code: .typeMismatch),
        ConditionFailure(testDescription: "date == text", condition: Field("joined") == "2020", code: .typeMismatch),
        ConditionFailure(testDescription: "url == integer", condition: Field("homepage") == 1, code: .typeMismatch),
        ConditionFailure(testDescription: "uuid == text", condition: Field("token") == "x", code: .typeMismatch),
        ConditionFailure(testDescription: "blob == text", condition: Field("avatar") == "x", code: .typeMismatch),
        ConditionFailure(testDescription: "text == blob", condition: Field("name") == Data(), code: .typeMismatch),
        ConditionFailure(
            testDescription: "< nil", condition: Field("age") < (nil as Int?), code: .typeMismatch),
        ConditionFailure(
            testDescription: "<= nil", condition: Field("age") <= (nil as Int?), code: .typeMismatch),
        ConditionFailure(
            testDescription: "> nil", condition: Field("name") > (nil as String?), code: .typeMismatch),
        ConditionFailure(
            testDescription: ">= nil", condition: .comparison("name", .greaterOrEqual, .null), code: .typeMismatch),
        ConditionFailure(
            testDescription: "contains on integer", condition: Field("age").contains("1"), code: .typeMismatch),
        ConditionFailure(
            testDescription: "hasPrefix on integer", condition: Field("age").hasPrefix("1"), code: .typeMismatch),
        ConditionFailure(
            testDescription: "contains on blob", condition: Field("avatar").contains("x"), code: .typeMismatch),
        ConditionFailure(
            testDescription: "contains on uuid", condition: Field("token").contains("x"), code: .typeMismatch),
        ConditionFailure(
            testDescription: "hasPrefix on date", condition: Field("joined").hasPrefix("2"), code: .typeMismatch),
        ConditionFailure(
            testDescription: "in with a mistyped member", condition: Field("name").in([Value.text("a"), .integer(1)]),
            code: .typeMismatch),
        ConditionFailure(
            testDescription: "mismatch inside not", condition: !(Field("name") == 1), code: .typeMismatch),
        ConditionFailure(
            testDescription: "== Double.nan", condition: Field("score") == Double.nan, code: .invalidValue),
        ConditionFailure(testDescription: "< Float.nan", condition: Field("score") < Float.nan, code: .invalidValue),
        ConditionFailure(
            testDescription: "NaN on an integer attribute", condition: Field("age") != Double.nan, code: .invalidValue),
        ConditionFailure(
            testDescription: "NaN inside or", condition: Field("age") == 1 || Field("score") >= Double.nan,
            code: .invalidValue),
    ]

    @Test("Conditions naming unknown attributes or comparing mismatched types don't resolve", arguments: failures)
    func resolutionErrors(_ test: ConditionFailure) throws {
        let layout = try Self.layout()
        let error = #expect(throws: PersistenceError.self) { try test.condition.resolve(in: layout) }
        #expect(error?.code == test.code)
    }

    @Test("Resolution error messages never quote the operand")
    func resolutionMessagesArePrivate() throws {
        let layout = try Self.layout()
        let error = #expect(throws: PersistenceError.self) {
            try (Field("age") == "secret-text").resolve(in: layout)
        }
        #expect(error.map { !"\($0)".contains("secret-text") } ?? false)
    }

    @Test("A NaN inside `in` is refused like any other NaN operand")
    func nanInsideIn() throws {
        let layout = try Self.layout()
        let error = #expect(throws: PersistenceError.self) {
            try Field("score").in([1.0, Double.nan]).resolve(in: layout)
        }
        #expect(error?.code == .invalidValue)
    }

    @Test("A nested Codable attribute can be compared only with isNull, as Entity documents")
    func codableAttributesOnlyCompareWithNull() throws {
        let layout = try Self.layout()
        #expect(throws: Never.self) { try Field("tags").isNull.resolve(in: layout) }
        #expect(throws: Never.self) { try (Field("tags") == nil).resolve(in: layout) }
        let error = #expect(throws: PersistenceError.self) {
            try (Field("tags") < Data("[]".utf8)).resolve(in: layout)
        }
        #expect(error?.code == .typeMismatch)
    }

    static let accepted: [Condition] = [
        Field("age") == 1.5,
        Field("score") > 1,
        Field("active") == true,
        Field("active") == 1,
        Field("joined") > Date(timeIntervalSinceReferenceDate: 0),
        Field("joined") <= 0,
        Field("homepage").hasPrefix("https://"),
        Field("homepage") == URL(fileURLWithPath: "/"),
        Field("token") == UUID(),
        Field("avatar") == Data([1]),
        Field("age") == nil,
        Field("age") != nil,
        Field("nickname") == (nil as String?),
        Field("nickname") != (nil as String?),
        Field("nickname").in(["a", nil]),
        Field("age").in([Int]()),
        Field("score") == Double.infinity,
        Field("name").contains(""),
        .and([]),
        .or([]),
    ]

    @Test("Comparable operands resolve", arguments: accepted)
    func acceptedConditions(_ condition: Condition) throws {
        let layout = try Self.layout()
        #expect(throws: Never.self) { try condition.resolve(in: layout) }
    }

    @Test("== nil and != nil resolve to null tests")
    func nilComparisonsBecomeNullTests() throws {
        let layout = try Self.layout()
        let nickname = try #require(layout.position(of: "nickname"))
        let equal = try (Field("nickname") == (nil as String?)).resolve(in: layout)
        let notEqual = try Condition.comparison("nickname", .notEqual, .null).resolve(in: layout)
        guard case .isNull(let position) = equal else {
            Issue.record("== nil did not resolve to isNull")
            return
        }
        #expect(position == nickname)
        guard case .not(.isNull(let negated)) = notEqual else {
            Issue.record("!= nil did not resolve to not(isNull)")
            return
        }
        #expect(negated == nickname)
    }

    @Test("Field builds the conditions it names")
    func fieldBuilders() {
        #expect((Field("a") == 1) == Condition.comparison("a", .equal, .integer(1)))
        #expect((Field("a") != "x") == Condition.comparison("a", .notEqual, .text("x")))
        #expect((Field("a") < 1.5) == Condition.comparison("a", .less, .real(1.5)))
        #expect((Field("a") == nil) == Condition.isNull("a"))
        #expect((Field("a") != nil) == Condition.not(.isNull("a")))
        #expect(Field("a").isNotNull == Condition.not(.isNull("a")))
        #expect(Field("a").in([1, 2]) == Condition.oneOf("a", [.integer(1), .integer(2)]))
        #expect((Field("a") == ConditionRole.admin) == Condition.comparison("a", .equal, .text("admin")))
        #expect((Field("a") != ConditionRole.admin) == Condition.comparison("a", .notEqual, .text("admin")))
        let combined = (Field("a") == 1 && Field("b") == 2) || !Field("c").isNull
        #expect(combined.attributeNames == ["a", "b", "c"])
    }

    // MARK: - Evaluation

    static let matches: [ConditionMatch] = [
        ConditionMatch(
            testDescription: "nil == nil", condition: Field("nickname") == (nil as String?), row: [:], expected: true),
        ConditionMatch(
            testDescription: "\"x\" == nil", condition: Field("nickname") == (nil as String?),
            row: ["nickname": .text("x")], expected: false),
        ConditionMatch(
            testDescription: "nil == \"x\"", condition: Field("nickname") == "x", row: [:], expected: false),
        ConditionMatch(
            testDescription: "\"x\" == \"x\"", condition: Field("nickname") == "x", row: ["nickname": .text("x")],
            expected: true),
        ConditionMatch(
            testDescription: "nil != \"x\"", condition: Field("nickname") != "x", row: [:], expected: true),
        ConditionMatch(
            testDescription: "\"x\" != \"x\"", condition: Field("nickname") != "x", row: ["nickname": .text("x")],
            expected: false),
        ConditionMatch(
            testDescription: "\"y\" != \"x\"", condition: Field("nickname") != "x", row: ["nickname": .text("y")],
            expected: true),
        ConditionMatch(
            testDescription: "nil != nil", condition: Field("nickname") != (nil as String?), row: [:], expected: false),
        ConditionMatch(testDescription: "nil isNull", condition: Field("age").isNull, row: [:], expected: true),
        ConditionMatch(
            testDescription: "0 isNull", condition: Field("age").isNull, row: ["age": .integer(0)], expected: false),
        ConditionMatch(
            testDescription: "0 isNotNull", condition: Field("age").isNotNull, row: ["age": .integer(0)],
            expected: true),
        ConditionMatch(testDescription: "nil < 5", condition: Field("age") < 5, row: [:], expected: false),
        ConditionMatch(testDescription: "nil <= 5", condition: Field("age") <= 5, row: [:], expected: false),
        ConditionMatch(testDescription: "nil > 5", condition: Field("age") > 5, row: [:], expected: false),
        ConditionMatch(testDescription: "nil >= 5", condition: Field("age") >= 5, row: [:], expected: false),
        ConditionMatch(testDescription: "!(nil < 5)", condition: !(Field("age") < 5), row: [:], expected: true),
        ConditionMatch(
            testDescription: "!(4 < 5)", condition: !(Field("age") < 5), row: ["age": .integer(4)], expected: false),
        ConditionMatch(
            testDescription: "4 < 5", condition: Field("age") < 5, row: ["age": .integer(4)], expected: true),
        ConditionMatch(
            testDescription: "5 < 5", condition: Field("age") < 5, row: ["age": .integer(5)], expected: false),
        ConditionMatch(
            testDescription: "5 <= 5", condition: Field("age") <= 5, row: ["age": .integer(5)], expected: true),
        ConditionMatch(
            testDescription: "6 <= 5", condition: Field("age") <= 5, row: ["age": .integer(6)], expected: false),
        ConditionMatch(
            testDescription: "6 > 5", condition: Field("age") > 5, row: ["age": .integer(6)], expected: true),
        ConditionMatch(
            testDescription: "5 > 5", condition: Field("age") > 5, row: ["age": .integer(5)], expected: false),
        ConditionMatch(
            testDescription: "5 >= 5", condition: Field("age") >= 5, row: ["age": .integer(5)], expected: true),
        ConditionMatch(
            testDescription: "4 >= 5", condition: Field("age") >= 5, row: ["age": .integer(4)], expected: false),
        ConditionMatch(
            testDescription: "5 == 5.0", condition: Field("age") == 5.0, row: ["age": .integer(5)], expected: true),
        ConditionMatch(
            testDescription: "5 == 5.5", condition: Field("age") == 5.5, row: ["age": .integer(5)], expected: false),
        ConditionMatch(
            testDescription: "1.5 > 1", condition: Field("score") > 1, row: ["score": .real(1.5)], expected: true),
        ConditionMatch(
            testDescription: "Int64.max < 2^63", condition: Field("age") < 9.223_372_036_854_775_807e18,
            row: ["age": .integer(.max)], expected: true),
        ConditionMatch(
            testDescription: "true == true", condition: Field("active") == true, row: ["active": .integer(1)],
            expected: true),
        ConditionMatch(
            testDescription: "false == true", condition: Field("active") == true, row: ["active": .integer(0)],
            expected: false),
        ConditionMatch(
            testDescription: "date < later", condition: Field("joined") < Date(timeIntervalSinceReferenceDate: 10),
            row: ["joined": .real(9.999)], expected: true),
        ConditionMatch(
            testDescription: "\"Z\" < \"a\"", condition: Field("name") < "a", row: ["name": .text("Z")], expected: true),
        ConditionMatch(
            testDescription: "\"é\" > \"z\"", condition: Field("name") > "z", row: ["name": .text("é")], expected: true),
        ConditionMatch(
            testDescription: "decomposed é != composed é", condition: Field("name") == "\u{E9}",
            row: ["name": .text("e\u{301}")], expected: false),
        ConditionMatch(
            testDescription: "2 in [1, 2, 3]", condition: Field("age").in([1, 2, 3]), row: ["age": .integer(2)],
            expected: true),
        ConditionMatch(
            testDescription: "4 in [1, 2, 3]", condition: Field("age").in([1, 2, 3]), row: ["age": .integer(4)],
            expected: false),
        ConditionMatch(
            testDescription: "nil in [1, 2, 3]", condition: Field("age").in([1, 2, 3]), row: [:], expected: false),
        ConditionMatch(
            testDescription: "nil in [1, nil]", condition: Field("age").in([1, nil] as [Int?]), row: [:],
            expected: true),
        ConditionMatch(
            testDescription: "1 in [1, nil]", condition: Field("age").in([1, nil] as [Int?]), row: ["age": .integer(1)],
            expected: true),
        ConditionMatch(
            testDescription: "2 in [1, nil]", condition: Field("age").in([1, nil] as [Int?]), row: ["age": .integer(2)],
            expected: false),
        ConditionMatch(
            testDescription: "2 in [1.5, 2.0]", condition: Field("age").in([1.5, 2.0]), row: ["age": .integer(2)],
            expected: true),
        ConditionMatch(
            testDescription: "1 in []", condition: Field("age").in([Int]()), row: ["age": .integer(1)], expected: false),
        ConditionMatch(testDescription: "nil in []", condition: Field("age").in([Int]()), row: [:], expected: false),
        ConditionMatch(
            testDescription: "composed é in [decomposed é]", condition: Field("name").in(["e\u{301}"]),
            row: ["name": .text("\u{E9}")], expected: false),
        ConditionMatch(
            testDescription: "\"hello\" contains \"ell\"", condition: Field("name").contains("ell"),
            row: ["name": .text("hello")], expected: true),
        ConditionMatch(
            testDescription: "\"HELLO\" contains \"ell\"", condition: Field("name").contains("ell"),
            row: ["name": .text("HELLO")], expected: false),
        ConditionMatch(
            testDescription: "\"hello\" contains \"hello!\"", condition: Field("name").contains("hello!"),
            row: ["name": .text("hello")], expected: false),
        ConditionMatch(
            testDescription: "\"hello\" contains \"lo\" at the end", condition: Field("name").contains("lo"),
            row: ["name": .text("hello")], expected: true),
        ConditionMatch(
            testDescription: "nil contains \"\"", condition: Field("nickname").contains(""), row: [:],
            expected: false),
        ConditionMatch(
            testDescription: "\"\" contains \"\"", condition: Field("nickname").contains(""),
            row: ["nickname": .text("")], expected: true),
        ConditionMatch(
            testDescription: "\"abc\" contains \"%\"", condition: Field("name").contains("%"),
            row: ["name": .text("abc")], expected: false),
        ConditionMatch(
            testDescription: "\"100%\" contains \"%\"", condition: Field("name").contains("%"),
            row: ["name": .text("100%")], expected: true),
        ConditionMatch(
            testDescription: "\"ab\" contains \"a_\"", condition: Field("name").contains("a_"),
            row: ["name": .text("ab")], expected: false),
        ConditionMatch(
            testDescription: "\"xa_b\" contains \"a_\"", condition: Field("name").contains("a_"),
            row: ["name": .text("xa_b")], expected: true),
        ConditionMatch(
            testDescription: "\"a\\\\b\" contains \"\\\\\"", condition: Field("name").contains("\\"),
            row: ["name": .text("a\\b")], expected: true),
        ConditionMatch(
            testDescription: "decomposed é contains \"e\"", condition: Field("name").contains("e"),
            row: ["name": .text("e\u{301}")], expected: true),
        ConditionMatch(
            testDescription: "composed é contains \"e\"", condition: Field("name").contains("e"),
            row: ["name": .text("\u{E9}")], expected: false),
        ConditionMatch(
            testDescription: "decomposed é contains composed é", condition: Field("name").contains("\u{E9}"),
            row: ["name": .text("e\u{301}")], expected: false),
        ConditionMatch(
            testDescription: "text with NUL contains NUL", condition: Field("name").contains("\u{0}"),
            row: ["name": .text("a\u{0}b")], expected: true),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"ab\"", condition: Field("name").hasPrefix("ab"),
            row: ["name": .text("abc")], expected: true),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"AB\"", condition: Field("name").hasPrefix("AB"),
            row: ["name": .text("abc")], expected: false),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"bc\"", condition: Field("name").hasPrefix("bc"),
            row: ["name": .text("abc")], expected: false),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"a%\"", condition: Field("name").hasPrefix("a%"),
            row: ["name": .text("abc")], expected: false),
        ConditionMatch(
            testDescription: "\"a%c\" hasPrefix \"a%\"", condition: Field("name").hasPrefix("a%"),
            row: ["name": .text("a%c")], expected: true),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"_b\"", condition: Field("name").hasPrefix("_b"),
            row: ["name": .text("abc")], expected: false),
        ConditionMatch(
            testDescription: "decomposed é hasPrefix \"e\"", condition: Field("name").hasPrefix("e"),
            row: ["name": .text("e\u{301}")], expected: true),
        ConditionMatch(
            testDescription: "\"abc\" hasPrefix \"\"", condition: Field("name").hasPrefix(""),
            row: ["name": .text("abc")], expected: true),
        ConditionMatch(
            testDescription: "nil hasPrefix \"\"", condition: Field("nickname").hasPrefix(""), row: [:],
            expected: false),
        ConditionMatch(
            testDescription: "URL hasPrefix", condition: Field("homepage").hasPrefix("https://"),
            row: ["homepage": .text("https://example.com")], expected: true),
        ConditionMatch(testDescription: "empty and", condition: .and([]), row: [:], expected: true),
        ConditionMatch(testDescription: "empty or", condition: .or([]), row: [:], expected: false),
        ConditionMatch(testDescription: "not empty or", condition: !.or([]), row: [:], expected: true),
        ConditionMatch(
            testDescription: "true && false", condition: Field("age") == 1 && Field("name") == "x",
            row: ["age": .integer(1), "name": .text("y")], expected: false),
        ConditionMatch(
            testDescription: "true && true", condition: Field("age") == 1 && Field("name") == "x",
            row: ["age": .integer(1), "name": .text("x")], expected: true),
        ConditionMatch(
            testDescription: "false || true", condition: Field("age") == 2 || Field("name") == "x",
            row: ["age": .integer(1), "name": .text("x")], expected: true),
        ConditionMatch(
            testDescription: "false || false", condition: Field("age") == 2 || Field("name") == "x",
            row: ["age": .integer(1), "name": .text("y")], expected: false),
        ConditionMatch(
            testDescription: "!(nil > 3) || nil > 3", condition: !(Field("age") > 3) || Field("age") > 3, row: [:],
            expected: true),
        ConditionMatch(
            testDescription: "and of three",
            condition: .and([Field("age") >= 1, Field("age") <= 3, Field("age") != 2]),
            row: ["age": .integer(2)], expected: false),
    ]

    @Test("Resolved conditions evaluate with two-valued, byte-wise semantics", arguments: matches)
    func evaluation(_ test: ConditionMatch) throws {
        let layout = try Self.layout()
        let resolved = try test.condition.resolve(in: layout)
        let values = try Self.row(test.row, in: layout)
        #expect(resolved.matches(values) == test.expected)
    }

    // MARK: - Queries

    @Test("A negative limit or offset is an invalid argument", arguments: [(-1, 0), (0, -1), (Int.min, Int.min)])
    func negativeWindow(limit: Int, offset: Int) throws {
        let layout = try Self.layout()
        let error = #expect(throws: PersistenceError.self) {
            try Query(limit: limit, offset: offset).resolve(in: layout)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("Unknown sort or condition attributes are refused")
    func queryUnknownAttributes() throws {
        let layout = try Self.layout()
        let sortError = #expect(throws: PersistenceError.self) {
            try Query(sortedBy: [.ascending("nope")]).resolve(in: layout)
        }
        #expect(sortError?.code == .unknownAttribute)
        let conditionError = #expect(throws: PersistenceError.self) {
            try Query(where: Field("nope") == 1).resolve(in: layout)
        }
        #expect(conditionError?.code == .unknownAttribute)
        let mismatchError = #expect(throws: PersistenceError.self) {
            try Query(where: Field("age") == "x", sortedBy: [.ascending("age")]).resolve(in: layout)
        }
        #expect(mismatchError?.code == .typeMismatch)
    }

    @Test("Sort keys end with the primary key, unless it is already one of them")
    func sortKeys() throws {
        let layout = try Self.layout()
        let age = try #require(layout.position(of: "age"))
        let name = try #require(layout.position(of: "name"))
        let id = layout.primaryKeyIndex
        let none = try Query().resolve(in: layout)
        #expect(none.sort.map(\.position) == [id])
        #expect(none.sort.map(\.ascending) == [true])
        let two = try Query(sortedBy: [.descending("age"), Sort("name")]).resolve(in: layout)
        #expect(two.sort.map(\.position) == [age, name, id])
        #expect(two.sort.map(\.ascending) == [false, true, true])
        let byKey = try Query(sortedBy: [.descending("id"), .ascending("age")]).resolve(in: layout)
        #expect(byKey.sort.map(\.position) == [id, age])
        #expect(byKey.sort.map(\.ascending) == [false, true])
        let windowed = try Query(limit: 0, offset: 7).resolve(in: layout)
        #expect(windowed.limit == 0)
        #expect(windowed.offset == 7)
        #expect(windowed.condition == nil)
    }

    /// Rows given out of key order: (id, age, name).
    static func people(in layout: RecordLayout) throws -> [[Value]] {
        let people: [(Int64, Int?, String)] = [
            (5, nil, "b"), (3, 20, "B"), (1, 30, "\u{E9}"), (6, 20, "e\u{301}"), (2, nil, "a"), (4, 30, "a"),
        ]
        return try people.map { id, age, name in
            try row(
                ["id": .integer(id), "age": age.map { .integer(Int64($0)) } ?? .null, "name": .text(name)], in: layout)
        }
    }

    static func ids(_ rows: [[Value]], in layout: RecordLayout) -> [Value] {
        rows.map { $0[layout.primaryKeyIndex] }
    }

    @Test("Sorting: nil first ascending and last descending, ties broken by ascending key, text by bytes")
    func sorting() throws {
        let layout = try Self.layout()
        let rows = try Self.people(in: layout)
        func sorted(_ sort: [Sort]) throws -> [Value] {
            try Self.ids(Query(sortedBy: sort).resolve(in: layout).apply(to: rows), in: layout)
        }
        let ids: ([Int64]) -> [Value] = { $0.map { .integer($0) } }
        #expect(try sorted([]) == ids([1, 2, 3, 4, 5, 6]))
        #expect(try sorted([.ascending("age")]) == ids([2, 5, 3, 6, 1, 4]))
        #expect(try sorted([.descending("age")]) == ids([1, 4, 3, 6, 2, 5]))
        #expect(try sorted([.descending("id")]) == ids([6, 5, 4, 3, 2, 1]))
        // "B" (42) < "a" (61) < "b" (62) < "e\u{301}" (65 CC 81) < "é" (C3 A9).
        #expect(try sorted([.ascending("name")]) == ids([3, 2, 4, 5, 6, 1]))
        #expect(try sorted([.descending("age"), .ascending("name")]) == ids([4, 1, 3, 6, 2, 5]))
        #expect(try sorted([.ascending("nickname")]) == ids([1, 2, 3, 4, 5, 6]))
    }

    static let windows: [ConditionWindow] = [
        ConditionWindow(offset: 0, limit: nil, ids: [1, 2, 3, 4, 5, 6]),
        ConditionWindow(offset: 0, limit: 2, ids: [1, 2]),
        ConditionWindow(offset: 2, limit: 2, ids: [3, 4]),
        ConditionWindow(offset: 1, limit: nil, ids: [2, 3, 4, 5, 6]),
        ConditionWindow(offset: 4, limit: 10, ids: [5, 6]),
        ConditionWindow(offset: 5, limit: 1, ids: [6]),
        ConditionWindow(offset: 6, limit: nil, ids: []),
        ConditionWindow(offset: 100, limit: 1, ids: []),
        ConditionWindow(offset: 0, limit: 0, ids: []),
        ConditionWindow(offset: 3, limit: 0, ids: []),
        ConditionWindow(offset: 0, limit: Int.max, ids: [1, 2, 3, 4, 5, 6]),
        ConditionWindow(offset: Int.max, limit: nil, ids: []),
    ]

    @Test("Offset and limit window the sorted records", arguments: windows)
    func windowing(_ window: ConditionWindow) throws {
        let layout = try Self.layout()
        let rows = try Self.people(in: layout)
        let query = try Query(limit: window.limit, offset: window.offset).resolve(in: layout)
        #expect(Self.ids(query.apply(to: rows), in: layout) == window.ids.map { .integer($0) })
    }

    @Test("The window applies after the condition and the sort")
    func filterSortWindow() throws {
        let layout = try Self.layout()
        let rows = try Self.people(in: layout)
        let query = try Query(where: Field("age") != nil, sortedBy: [.descending("age")], limit: 2, offset: 1)
            .resolve(in: layout)
        #expect(Self.ids(query.apply(to: rows), in: layout) == [.integer(4), .integer(3)])
        let none = try Query(where: Field("name") == "nobody").resolve(in: layout)
        #expect(none.apply(to: rows).isEmpty)
        #expect(try Query().resolve(in: layout).apply(to: []).isEmpty)
    }

    @Test("A huge limit with an offset returns the rest instead of trapping")
    func hugeLimitWithOffset() throws {
        let layout = try SchemaCache.layout(for: ConditionPerson.self)
        let rows = try ConditionTests.people(in: layout)
        let result = try Query(limit: Int.max, offset: 1).resolve(in: layout).apply(to: rows)
        #expect(result.count == rows.count - 1)
    }
}

/// A raw-value enum for the `Field == enum` overloads.
enum ConditionRole: String, Sendable {
    case admin
}
