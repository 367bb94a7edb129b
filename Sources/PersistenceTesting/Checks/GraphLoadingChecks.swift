import Foundation
import PersistenceCore
import Testing

/// Eager loading and limits per value: what `including:` loads equals the same loaded one query at a time, with
/// filters, orders and limits per parent, nested, to-one and to-many — on every backend.
enum GraphLoadingChecks {
    typealias G = GraphFixtures

    static let all: [ConformanceCheck] = [
        RelationshipChecks.graph("loads each parent's children filtered, sorted and limited, as one query each would") {
            try perParent($0)
        },
        RelationshipChecks.graph("loads a tree three levels deep, and to-ones, nil where nothing is named") {
            try nested($0)
        },
        RelationshipChecks.graph("loads children of more parents than one query binds") { try manyParents($0) },
        RelationshipChecks.graph("refuses a relationship the entity lacks or of another kind") { try refusals($0) },
        RelationshipChecks.examples("loads both sides of Department and Employee at once") { try both($0) },
        RelationshipChecks.graph("observes a graph: a new value when a parent or any loaded record changes") {
            try await observed($0)
        },
        ConformanceCheck("limits a query per value: nil shares a limit, text by bytes, then the window") {
            backend, directory in
            try await withDatabase(backend, directory, [AggregateChecks.Sale.self]) { try limitPerValue($0) }
        },
    ]

    static func seed(_ db: some Database) throws {
        try db.create((1...6).map { G.Parent(id: $0, name: "p\($0)") })
        var children: [G.NullifyChild] = []
        for id in 1...60 {
            // Parent 6 has none; notes repeat so the sort needs the primary key to be total.
            let parent: Int64? = id % 7 == 0 ? nil : Int64(id % 5 + 1)
            children.append(G.NullifyChild(id: Int64(id), parentID: parent, note: "n\(id % 4)"))
        }
        try db.create(children)
    }

    static func perParent(_ db: some Database) throws {
        try seed(db)
        let cases: [(Condition?, [Sort], Int?)] = [
            (nil, [], nil), (Field("note") != "n0", [.descending("note")], 3), (nil, [.ascending("note")], 0),
            (Field("note") == "n1", [], 1), (Field("id") > 1_000, [], 2),
        ]
        for (condition, sort, limit) in cases {
            let loaded = try db.recover(
                G.Parent.self, sortedBy: [.descending("id")],
                including: .many("nullifying", G.NullifyChild.self, where: condition, sortedBy: sort, limit: limit))
            #expect(loaded.map(\.entity.id) == [6, 5, 4, 3, 2, 1])
            for parent in loaded {
                let scope = Field("parentID") == parent.entity.id
                let expected = try db.recover(
                    G.NullifyChild.self, where: condition.map { scope && $0 } ?? scope, sortedBy: sort, limit: limit)
                #expect(parent.related == expected, "parent \(parent.entity.id), limit \(String(describing: limit))")
            }
        }
        // The parents' own window applies first.
        let two = try db.recover(
            G.Parent.self, limit: 2, offset: 1, including: .many("nullifying", G.NullifyChild.self))
        #expect(two.map(\.entity.id) == [2, 3] && two.allSatisfy { !$0.related.isEmpty })
    }

    static func nested(_ db: some Database) throws {
        // r1 → a, b; a → a1, a2; b → (none); r2 → c → c1 → c11 (four deep).
        let tree: [(String, String?)] = [
            ("r1", nil), ("r2", nil), ("a", "r1"), ("b", "r1"), ("a1", "a"), ("a2", "a"), ("c", "r2"), ("c1", "c"),
            ("c11", "c1"),
        ]
        for (id, parent) in tree { try db.create(G.Node(id: id, parentID: parent)) }
        let roots = try db.recover(
            G.Node.self, where: Field("parentID") == nil,
            including: .many(
                "children", G.Node.self, sortedBy: [.descending("id")],
                including: .many("children", G.Node.self, including: .one("parent", G.Node.self))))
        #expect(roots.map(\.entity.id) == ["r1", "r2"])
        #expect(roots[0].related.map(\.entity.id) == ["b", "a"])
        #expect(roots[0].related[1].related.map(\.entity.id) == ["a1", "a2"])
        #expect(roots[0].related[1].related.allSatisfy { $0.related?.id == "a" })
        #expect(roots[0].related[0].related.isEmpty)
        #expect(roots[1].related[0].related.map(\.entity.id) == ["c1"])
        // To-ones: nil for a nil key, and for a key that names no record (left by noAction).
        try db.create(G.Parent(id: 1, name: "p1"))
        try db.create([
            G.NoActionChild(id: 1, parentID: 1), G.NoActionChild(id: 2, parentID: nil),
            G.NoActionChild(id: 3, parentID: 1),
        ])
        try db.create(G.Parent(id: 2, name: "p2"))
        try db.create(G.NoActionChild(id: 4, parentID: 2))
        try db.delete(G.Parent.self, id: 2)
        let children = try db.recover(G.NoActionChild.self, including: .one("parent", G.Parent.self))
        #expect(children.map { $0.related?.id } == [1, nil, 1, nil])
    }

    static func manyParents(_ db: some Database) throws {
        let count = Including<G.Parent, [G.CascadeChild]>.batchSize + 300
        try db.write { context in
            try context.create((1...count).map { G.Parent(id: Int64($0), name: "") })
            try context.create((1...count).map { G.CascadeChild(id: Int64($0), parentID: Int64(count + 1 - $0)) })
        }
        let loaded = try db.recover(G.Parent.self, including: .many("cascading", G.CascadeChild.self, limit: 5))
        #expect(loaded.count == count)
        #expect(loaded.allSatisfy { $0.related.map(\.parentID) == [$0.entity.id] })
    }

    static func refusals(_ db: some Database) throws {
        try seed(db)
        expectError(.unknownAttribute) {
            try db.recover(G.Parent.self, including: .many("missing", G.NullifyChild.self))
        }
        expectError(.invalidArgument) {
            try db.recover(G.Parent.self, including: .many("nullifying", G.CascadeChild.self))
        }
        expectError(.invalidArgument) {
            try db.recover(G.Parent.self, including: .one("nullifying", G.NullifyChild.self))
        }
        expectError(.invalidArgument) { try db.recover(G.NullifyChild.self, including: .many("parent", G.Parent.self)) }
        expectError(.unknownAttribute) {
            try db.recover(
                G.Parent.self, including: .many("nullifying", G.NullifyChild.self, sortedBy: [.ascending("x")]))
        }
    }

    static func observed(_ db: some Database) async throws {
        try db.create(G.Parent(id: 1, name: "p1"))
        var values = db.observe(
            G.Parent.self,
            including: .many("cascading", G.CascadeChild.self, including: .one("parent", G.Parent.self))
        ).makeAsyncIterator()
        let first = try await values.next()
        #expect(first?.map(\.related.count) == [0])
        // A child, two levels of the graph: the parents' value follows.
        try await db.write { try $0.create(G.CascadeChild(id: 1, parentID: 1)) }
        let second = try await values.next()
        #expect(second?.first?.related.map(\.entity.id) == [1])
        #expect(second?.first?.related.first?.related?.name == "p1")
        // The parent itself.
        try await db.write { try $0.update(G.Parent(id: 1, name: "renamed")) }
        let third = try await values.next()
        #expect(third?.first?.entity.name == "renamed" && third?.first?.related.first?.related?.name == "renamed")
        // An entity the graph doesn't load, then one it does: the next value is the second write's.
        try await db.write { try $0.create(G.DenyChild(id: 1, parentID: 1)) }
        try await db.write { try $0.delete(G.CascadeChild.self, id: 1) }
        let fourth = try await values.next()
        #expect(fourth?.first?.related.isEmpty == true)
    }

    static func both(_ db: some Database) throws {
        try db.create([G.Department(id: 1, name: "Eng"), G.Department(id: 2, name: "Ops")])
        try db.create([
            G.Employee(id: 1, name: "Grace", departmentID: 1),
            G.Employee(id: 2, name: "Alan", departmentID: 1, managerID: 1),
            G.Employee(id: 3, name: "Ada", departmentID: nil, managerID: 1),
        ])
        let employees = try db.recover(
            G.Employee.self,
            including: .both(.one("department", G.Department.self), .many("reports", G.Employee.self)))
        #expect(employees.map { $0.related.first?.name } == ["Eng", "Eng", nil])
        #expect(employees.map { $0.related.second.map(\.id) } == [[2, 3], [], []])
        let departments = try db.recover(G.Department.self, including: .many("employees", G.Employee.self))
        #expect(departments.map { $0.related.map(\.id) } == [[1, 2], []])
    }

    static func limitPerValue(_ db: some Database) throws {
        typealias Sale = AggregateChecks.Sale
        try db.create(AggregateChecks.edgeSales)
        // One per region: nil, "", "B", "a", and both forms of "café" — six, in primary-key order.
        let first = try db.recover(Sale.self, query: Query(limitPerValue: LimitPerValue("region", 1)))
        #expect(first.map(\.id) == [1, 2, 3, 4, 5, 6], "\(first.map(\.id))")
        // Two per region, latest day first, then the window of the whole.
        let query = Query(
            sortedBy: [.descending("day")], limit: 3, offset: 1, limitPerValue: LimitPerValue("region", 2))
        let all = try db.recover(Sale.self, sortedBy: [.descending("day")])
        var counts: [String: Int] = [:]
        let expected = all.filter { sale in
            let key = sale.region.map { Array($0.utf8).description } ?? "nil"
            counts[key, default: 0] += 1
            return counts[key, default: 0] <= 2
        }
        #expect(try db.recover(Sale.self, query: query).map(\.id) == Array(expected.dropFirst().prefix(3).map(\.id)))
        #expect(try db.recover(Sale.self, query: Query(limitPerValue: LimitPerValue("paid", 0))).isEmpty)
        expectError(.invalidArgument) {
            try db.recover(Sale.self, query: Query(limitPerValue: LimitPerValue("paid", -1)))
        }
        expectError(.unknownAttribute) { try db.recover(Sale.self, query: Query(limitPerValue: LimitPerValue("x", 1))) }
        expectError(.typeMismatch) {
            try db.recover(Sale.self, query: Query(limitPerValue: LimitPerValue("details", 1)))
        }
        // forEach streams the same records.
        var streamed: [Int64] = []
        try db.forEach(Sale.self, query: query) { streamed.append($0.id) }
        #expect(streamed == expected.dropFirst().prefix(3).map(\.id))
    }
}
