import PersistenceCore
import Testing

/// Iterating with `forEach`: the records and order of `recover`, early stops, and queries inside the body.
enum IterationChecks {
    static let all: [ConformanceCheck] = [
        .database("iterates the records and order recover returns") { try sameAsRecover($0) },
        .database("stops iterating when the body throws") { try earlyStop($0) },
        .database("runs queries, the same one included, inside an iteration") { try reentrant($0) },
        .database("updates the records it iterates, in one write") { try updatesWhileIterating($0) },
    ]

    struct Stop: Error, Equatable {}

    static func visited(_ db: some Database, _ query: Query) throws -> [Person] {
        try db.read { context in
            var seen: [Person] = []
            try context.forEach(Person.self, query: query) { seen.append($0) }
            return seen
        }
    }

    static func sameAsRecover(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        let queries = [
            Query(),
            Query(where: Field("age") >= 18),
            Query(where: Field("name") == "Dee"),  // through the index on name
            Query(where: Field("name").in(["Eve", "Ada", "Nobody"])),
            Query(where: Field("age") != 36, sortedBy: [.descending("score")]),
            Query(sortedBy: [.ascending("age")], limit: 3, offset: 1),
            Query(where: Field("score") > 0, limit: 2, offset: 1),
            Query(limit: 0),
            Query(offset: 9),
        ]
        for query in queries {
            let recovered = try db.read { try $0.recover(Person.self, query: query) }
            #expect(try visited(db, query) == recovered, "query \(query)")
        }
        var names: [String] = []
        try db.forEach(Person.self, where: Field("age") == 36, sortedBy: [.descending("name")]) {
            names.append($0.name)
        }
        #expect(names == ["Dee", "Ada"])
    }

    static func earlyStop(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        var seen: [Int64] = []
        #expect(throws: Stop.self) {
            try db.forEach(Person.self) { person in
                seen.append(person.id)
                if seen.count == 2 { throw Stop() }
            }
        }
        #expect(seen == [1, 2])
        // The iteration ended cleanly: the same query runs again from the start.
        var again: [Int64] = []
        try db.forEach(Person.self) { again.append($0.id) }
        #expect(again == [1, 2, 3, 4, 5])
    }

    static func reentrant(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        let pairs = try db.read { context in
            var pairs: [[Int64]] = []
            try context.forEach(Person.self, query: Query()) { outer in
                var inner: [Int64] = []
                try context.forEach(Person.self, query: Query()) { inner.append($0.id) }
                let all = try context.recover(Person.self, query: Query())
                #expect(all.map(\.id) == inner)
                #expect(try context.recover(Person.self, id: outer.id) == outer)
                pairs.append([outer.id] + inner)
            }
            return pairs
        }
        #expect(pairs.map(\.first) == [1, 2, 3, 4, 5])
        #expect(pairs.allSatisfy { Array($0.dropFirst()) == [1, 2, 3, 4, 5] })
    }

    static func updatesWhileIterating(_ db: some Database) throws {
        try db.create(QueryChecks.people())
        try db.write { context in
            var visited = 0
            try context.forEach(Person.self, query: Query()) { person in
                var changed = person
                changed.score += 100
                try context.update(changed)
                visited += 1
            }
            #expect(visited == 5)
        }
        let all: [Person] = try db.recover()
        #expect(all.map(\.score) == QueryChecks.people().map { $0.score + 100 })
    }
}
