import Foundation
import PersistenceCore
import Testing

/// Hostile strings as values match only themselves; as attribute names they are unknown attributes.
enum InjectionChecks {
    static let hostile = [
        "x' OR '1'='1", "x\" OR \"1\"=\"1", "%", "_", "a%", "_b", "'", "\"", "''", "\u{0}", "a\u{0}b", "\\",
        "'; DROP TABLE \"Person\"; --", "*", "?", "?1", ":name", "$x", "@y", "[z]", "`w`", ")", "(", "%%", "\n",
    ]

    static let all: [ConformanceCheck] = [
        .database("matches injection strings as exact values only") { try values($0) },
        .database("refuses injection strings as attribute names") { try names($0) },
    ]

    static func values(_ db: some Database) throws {
        let decoys = ["plain", "a", "b", "ab", "x", "1", ""]
        let all = hostile + decoys
        try db.create(all.enumerated().map { Person(id: Int64($0 + 1), name: $1, email: $1) })
        for (offset, text) in all.enumerated() {
            let byKey: [Person] = try db.recover(key: "name", value: text)
            #expect(byKey.map(\.id) == [Int64(offset + 1)], "key:value for \(text.debugDescription)")
            let byCondition: [Person] = try db.recover(where: Field("email") == text)
            #expect(byCondition.map(\.id) == [Int64(offset + 1)], "== for \(text.debugDescription)")
            let contained: [Person] = try db.recover(where: Field("name").contains(text))
            let expected = all.enumerated().filter { bytes(of: $0.element, contain: text) }.map { Int64($0.offset + 1) }
            #expect(contained.map(\.id) == expected, "contains \(text.debugDescription)")
            let prefixed: [Person] = try db.recover(where: Field("name").hasPrefix(text))
            let expectedPrefix = all.enumerated().filter { $0.element.utf8.starts(with: text.utf8) }
                .map { Int64($0.offset + 1) }
            #expect(prefixed.map(\.id) == expectedPrefix, "hasPrefix \(text.debugDescription)")
        }
        let tags = hostile.enumerated().map { Tag(id: $1, count: $0) }
        try db.create(tags)
        for tag in tags { #expect(try db.recover(Tag.self, id: tag.id) == tag) }
        #expect(try db.count(Person.self) == all.count, "no statement was altered")
    }

    static func names(_ db: some Database) throws {
        try db.create(Person(id: 1, name: "Ada"))
        for name in hostile + ["name\" OR 1=1 --", "name; DROP TABLE Person", "", "NAME", "name "] {
            expectError(.unknownAttribute, "\(name.debugDescription)") {
                let _: [Person] = try db.recover(key: name, value: "Ada")
            }
            expectError(.unknownAttribute) { let _: [Person] = try db.recover(sortedBy: [.ascending(name)]) }
            expectError(.unknownAttribute) { try db.count(Person.self, where: Field(name).isNull) }
            expectError(.unknownAttribute) { try db.delete(Person.self, where: Field(name) == 1) }
        }
        #expect(try db.count(Person.self) == 1)
    }

    private static func bytes(of text: String, contain needle: String) -> Bool {
        let haystack = Array(text.utf8)
        let pattern = Array(needle.utf8)
        if pattern.isEmpty { return true }
        guard pattern.count <= haystack.count else { return false }
        return (0...(haystack.count - pattern.count)).contains {
            haystack[$0..<($0 + pattern.count)].elementsEqual(pattern)
        }
    }
}
