import Foundation
import PersistenceCore
import Testing

/// Aggregates: counts, sums, extremes and averages, alone and grouped with `having`, `distinct` — each compared with
/// the same computed in Swift over every record, on edge values, `nil`s and empty sets.
enum AggregateChecks {
    static let all: [ConformanceCheck] = [
        sales("aggregates an empty set: a count of 0, nil elsewhere, no groups") { try empty($0) },
        sales("computes every aggregate as Swift does over the same records") { try matchesSwift($0) },
        sales("groups by one and two attributes, nil first, text by bytes, filtered by having") { try groups($0) },
        sales("lists distinct values, and answers the typed conveniences") { try distinctAndTyped($0) },
        sales("refuses a sum whose total leaves its type, averages it, and the read goes on") { try overflow($0) },
        sales("sums and means depend on the values, not their order: only the total decides") {
            try orderIndependence($0)
        },
        sales("refuses aggregates that don't fit the entity, before reading") { try refusals($0) },
        sales("matches Swift on 60 random queries over 400 random records") { try randomized($0) },
        sales("reads some attributes into a lighter type, and refuses ones that don't fit") { try projections($0) },
    ]

    struct Sale: Entity, Equatable {
        var id: Int64
        var region: String?
        var amount: Int64?
        var price: Double?
        var day: Date
        var tag: UUID?
        var paid: Bool
        var details: [String: Int]?
    }

    static func sales(_ name: String, _ body: @escaping @Sendable (any Database) async throws -> Void)
        -> ConformanceCheck
    {
        ConformanceCheck(name) { backend, directory in
            try await withDatabase(backend, directory, [Sale.self], body)
        }
    }

    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"
    static let day0 = Date(timeIntervalSinceReferenceDate: 800_000_000)

    /// Records with the edge values: composed and decomposed text, the empty string, nil, negative zero, extremes.
    static let edgeSales: [Sale] = [
        Sale(id: 1, region: composed, amount: 10, price: 1.5, day: day0, tag: nil, paid: true, details: nil),
        Sale(id: 2, region: decomposed, amount: -3, price: -0.0, day: day0 + 1, tag: UUID(), paid: false, details: [:]),
        Sale(id: 3, region: "", amount: nil, price: nil, day: day0 - 86_400, tag: nil, paid: true, details: nil),
        Sale(
            id: 4, region: nil, amount: Int64.max / 4, price: 1e300, day: day0, tag: UUID(), paid: false, details: nil),
        Sale(
            id: 5, region: "B", amount: Int64.min / 4, price: -1e-300, day: day0 + 2, tag: nil, paid: true, details: nil
        ),
        Sale(id: 6, region: "a", amount: 0, price: 2.25, day: day0, tag: nil, paid: true, details: ["k": 1]),
        Sale(id: 7, region: "B", amount: 7, price: nil, day: day0 + 3, tag: nil, paid: false, details: nil),
        Sale(id: 8, region: composed, amount: 5, price: 0.1, day: day0 - 1, tag: nil, paid: true, details: nil),
        Sale(id: 9, region: nil, amount: nil, price: 0.2, day: day0 + 4, tag: nil, paid: false, details: nil),
    ]

    static func empty(_ db: some Database) throws {
        let rows = try db.aggregate(
            Sale.self,
            [
                .count, .count("amount"), .sum("amount"), .sum("price"), .min("region"), .max("day"),
                .average("amount"),
            ])
        #expect(
            rows == [
                AggregateRow(
                    names: [
                        "count", "count(amount)", "sum(amount)", "sum(price)", "min(region)", "max(day)",
                        "average(amount)",
                    ],
                    values: [.integer(0), .integer(0), .null, .null, .null, .null, .null])
            ])
        #expect(try db.aggregate(Sale.self, [.count], groupedBy: ["region"]).isEmpty)
        #expect(try db.sum(Sale.self, "amount", as: Int64.self) == nil)
        #expect(try db.average(Sale.self, "price") == nil)
        // Having without groups filters the one row.
        #expect(try db.aggregate(Sale.self, [.count], having: Field("count") > 0).isEmpty)
    }

    static func matchesSwift(_ db: some Database) throws {
        try db.create(edgeSales)
        let all: [Aggregate] = [
            .count, .count("region"), .count("details"), .sum("amount"), .sum("price"), .min("region"),
            .max("region"), .min("amount"), .max("amount"), .min("price"), .max("price"), .min("day"), .max("day"),
            .min("tag"), .max("tag"), .min("paid"), .max("paid"), .average("amount"), .average("price"),
        ]
        for condition: Condition? in [nil, Field("paid") == true, Field("region") == composed, Field("id") > 100] {
            let rows = try db.aggregate(Sale.self, all, where: condition)
            let expected = try reference(edgeSales, all, where: condition)
            expectEqual(rows, expected, "where \(String(describing: condition))")
        }
    }

    static func groups(_ db: some Database) throws {
        try db.create(edgeSales)
        let rows = try db.aggregate(Sale.self, [.count, .sum("amount", as: "total")], groupedBy: ["region"])
        // nil, then "", "B", "a", then the composed é (0xC3 0xA9) after the decomposed one (e, 0xCC 0x81).
        #expect(
            rows.map { $0["region"] } == [.null, .text(""), .text("B"), .text("a"), .text(decomposed), .text(composed)])
        #expect(rows.map { $0["count"] } == [2, 1, 2, 1, 1, 2].map { Value.integer($0) })
        #expect(rows.first?["total"] == .integer(Int64.max / 4))
        #expect(rows[2]["total"] == .integer(Int64.min / 4 + 7))
        #expect(rows[1]["total"] == .null)
        let busy = try db.aggregate(
            Sale.self, [.count, .sum("amount", as: "total")], groupedBy: ["region"],
            having: Field("count") >= 2 && Field("total") != nil && Field("total") < 100)
        #expect(busy.map { $0["region"] } == [.text("B"), .text(composed)], "\(busy)")
        // Two attributes, a where, and having on a grouping attribute.
        let pairs = try db.aggregate(
            Sale.self, [.count, .max("price")], where: Field("id") != 4, groupedBy: ["paid", "region"],
            having: Field("region") != nil)
        let expected = try reference(
            edgeSales, [.count, .max("price")], where: Field("id") != 4, groupedBy: ["paid", "region"],
            having: Field("region") != nil)
        expectEqual(pairs, expected, "two groups")
        #expect(pairs.first?["paid"] == .integer(0) && pairs.first?["region"] == .text("B"), "\(pairs)")
    }

    static func distinctAndTyped(_ db: some Database) throws {
        try db.create(edgeSales)
        #expect(try db.distinct(Sale.self, ["paid"]).map { $0["paid"] } == [.integer(0), .integer(1)])
        #expect(try db.distinct(Sale.self, ["region"], where: Field("paid") == true).count == 4)
        #expect(try db.sum(Sale.self, "amount", as: Int64.self, where: Field("region") == "B") == Int64.min / 4 + 7)
        #expect(try db.sum(Sale.self, "price", as: Double.self, where: Field("id") <= 2) == 1.5)
        #expect(try db.minimum(Sale.self, "day", as: Date.self) == day0 - 86_400)
        #expect(try db.maximum(Sale.self, "region", as: String.self) == composed)
        #expect(try db.average(Sale.self, "amount", where: Field("id").in([1, 2, 7, 8])) == 4.75)
        let total: Int64? = try db.read { try $0.sum(Sale.self, "amount", where: Field("paid") == false) }
        #expect(total == Int64.max / 4 - 3 + 7)
        // A row's values read as Swift types, and refuse the wrong one.
        let row = try #require(try db.aggregate(Sale.self, [.count, .average("price")]).first)
        #expect(try row.value("count", as: Int.self) == 9)
        #expect(throws: PersistenceError.self) { try row.value("average(price)", as: String.self) }
        #expect(throws: PersistenceError.self) { try row.value("nope", as: Int.self) }
    }

    static func overflow(_ db: some Database) throws {
        try db.create([
            Sale(id: 1, region: "x", amount: Int64.max, price: nil, day: day0, tag: nil, paid: true, details: nil),
            Sale(id: 2, region: "x", amount: 1, price: nil, day: day0, tag: nil, paid: true, details: nil),
        ])
        try db.read { context throws in
            let error = #expect(throws: PersistenceError.self) {
                try context.aggregate(Sale.self, [.sum("amount")], groupedBy: ["region"])
            }
            #expect(error?.code == .invalidValue, "\(String(describing: error))")
            // An integer mean divides the exact sum (2^63, past Int64) once: it has a value; the read goes on.
            #expect(try context.average(Sale.self, "amount") == 4.611686018427388e18)
            #expect(try context.count(Sale.self) == 2)
            #expect(try context.sum(Sale.self, "amount", as: Int64.self, where: Field("id") == 1) == Int64.max)
        }
        // Doubles: past the largest finite Double is a refusal too, never infinity.
        try db.write { context in
            try context.update(
                Sale(
                    id: 1, region: "x", amount: 1, price: .greatestFiniteMagnitude, day: day0, tag: nil, paid: true,
                    details: nil))
            try context.update(
                Sale(
                    id: 2, region: "x", amount: 1, price: .greatestFiniteMagnitude, day: day0, tag: nil, paid: true,
                    details: nil))
        }
        expectError(.invalidValue) { try db.sum(Sale.self, "price", as: Double.self) }
        // Their mean is finite, though their sum isn't.
        #expect(try db.average(Sale.self, "price") == .greatestFiniteMagnitude)
        #expect(try db.maximum(Sale.self, "price", as: Double.self) == .greatestFiniteMagnitude)
    }

    /// `values` as the amounts (or prices) of records 1, 2, 3…, in region "x", replacing every record.
    static func store(_ db: some Database, amounts: [Int64] = [], prices: [Double] = []) throws {
        try db.write { context in
            _ = try context.deleteAll(Sale.self)
            for index in 0..<max(amounts.count, prices.count) {
                try context.create(
                    Sale(
                        id: Int64(index + 1), region: "x",
                        amount: amounts.indices.contains(index) ? amounts[index] : nil,
                        price: prices.indices.contains(index) ? prices[index] : nil, day: day0, tag: nil, paid: true,
                        details: nil))
            }
        }
    }

    static func orderIndependence(_ db: some Database) throws {
        // Each order of the same values, by primary key (the order LMDB scans in, and SQL's plans often too).
        for amounts in permutations([Int64.max, 1, -1]) {
            try store(db, amounts: amounts)
            #expect(try db.sum(Sale.self, "amount", as: Int64.self) == Int64.max, "\(amounts)")
            #expect(try db.average(Sale.self, "amount") == Double(Int64.max) / 3, "\(amounts)")
            let grouped = try db.aggregate(
                Sale.self, [.sum("amount", as: "total")], groupedBy: ["region"], having: Field("total") > 0)
            #expect(grouped.map { $0["total"] } == [.integer(Int64.max)], "\(amounts)")
        }
        for amounts in permutations([Int64.min, Int64.min, Int64.max, Int64.max]) {
            try store(db, amounts: amounts)
            #expect(try db.sum(Sale.self, "amount", as: Int64.self) == -2, "\(amounts)")
            #expect(try db.average(Sale.self, "amount") == -0.5, "\(amounts)")
        }
        for amounts in permutations([Int64.min, -1, 1]) {
            try store(db, amounts: amounts)
            #expect(try db.sum(Sale.self, "amount", as: Int64.self) == Int64.min, "\(amounts)")
        }
        // A total past Int64 is refused in every order; the mean of it is still a value.
        for amounts in permutations([Int64.min, Int64.min, 5]) {
            try store(db, amounts: amounts)
            expectError(.invalidValue) { try db.sum(Sale.self, "amount", as: Int64.self) }
            // -2^64 + 5, rounded once (the 5 is lost), divided.
            #expect(try db.average(Sale.self, "amount") == -18_446_744_073_709_551_616.0 / 3, "\(amounts)")
        }
        // Doubles: a partial sum past the largest Double, a finite total.
        for prices in permutations([1e308, 1e308, -1e308]) {
            try store(db, prices: prices)
            #expect(try db.sum(Sale.self, "price", as: Double.self) == 1e308, "\(prices)")
            #expect(try db.average(Sale.self, "price") == 1e308 / 3, "\(prices)")
        }
        for prices in permutations([1e308, 1e308, 1.5]) {
            try store(db, prices: prices)
            expectError(.invalidValue) { try db.sum(Sale.self, "price", as: Double.self) }
            #expect(try db.average(Sale.self, "price") == 1e308 / 3 * 2 + 0.5, "\(prices)")
        }
        // Small values keep their precision beside large ones that cancel.
        try store(db, prices: [1e300, 1e-300, -1e300, 3e-300])
        #expect(try db.sum(Sale.self, "price", as: Double.self) == 1e-300 + 3e-300)
        // An infinite value: its sum and mean are refused, never infinity; its extreme is itself.
        try store(db, prices: [1, .infinity])
        expectError(.invalidValue) { try db.sum(Sale.self, "price", as: Double.self) }
        expectError(.invalidValue) { try db.average(Sale.self, "price") }
        #expect(try db.maximum(Sale.self, "price", as: Double.self) == .infinity)
    }

    /// Every order of `values`.
    static func permutations<T>(_ values: [T]) -> [[T]] {
        guard values.count > 1 else { return [values] }
        return values.indices.flatMap { index in
            var rest = values
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    static func refusals(_ db: some Database) throws {
        try db.create(edgeSales)
        expectError(.typeMismatch) { try db.aggregate(Sale.self, [.sum("region")]) }
        expectError(.typeMismatch) { try db.aggregate(Sale.self, [.average("day")]) }
        expectError(.typeMismatch) { try db.aggregate(Sale.self, [.min("details")]) }
        expectError(.unknownAttribute) { try db.aggregate(Sale.self, [.max("missing")]) }
        expectError(.unknownAttribute) { try db.aggregate(Sale.self, [.count], groupedBy: ["missing"]) }
        expectError(.unknownAttribute) { try db.aggregate(Sale.self, [.count], having: Field("amount") > 1) }
        expectError(.typeMismatch) { try db.aggregate(Sale.self, [.count], having: Field("count") == "many") }
        expectError(.invalidArgument) { try db.aggregate(Sale.self, [.count, .count]) }
        expectError(.invalidArgument) { try db.aggregate(Sale.self, [.count(as: "region")], groupedBy: ["region"]) }
        expectError(.invalidArgument) { try db.aggregate(Sale.self, []) }
        // Names with quotes and SQL in them are only names.
        let rows = try db.aggregate(Sale.self, [.count(as: "n\"; DROP TABLE \"Sale\"; --")])
        #expect(rows.first?.values == [.integer(9)])
        #expect(try db.count(Sale.self) == 9)
    }

    static func randomized(_ db: some Database) throws {
        var random = SeededGenerator(seed: 0xA66_2026)
        let regions: [String?] = [nil, "", "a", "B", composed, decomposed, "z\u{0}z"]
        var sales: [Sale] = []
        for id in 1...400 {
            sales.append(
                Sale(
                    id: Int64(id), region: regions.randomElement(using: &random) ?? nil,
                    amount: Bool.random(using: &random)
                        ? nil : Int64.random(in: -1_000_000...1_000_000, using: &random),
                    price: Int.random(in: 0..<5, using: &random) == 0
                        ? nil : Double(Int.random(in: -10_000...10_000, using: &random)) / 8,
                    day: day0 + Double(Int.random(in: 0..<10, using: &random) * 3_600), tag: nil,
                    paid: Bool.random(using: &random), details: nil))
        }
        try db.create(sales)
        let aggregates: [Aggregate] = [
            .count, .count("amount"), .sum("amount"), .sum("price"), .min("region"), .max("region"), .min("price"),
            .max("day"), .average("amount"), .average("price"),
        ]
        let groupings: [[String]] = [[], ["region"], ["paid"], ["region", "paid"], ["day"]]
        for query in 0..<60 {
            let groups = groupings.randomElement(using: &random) ?? []
            let chosen = aggregates.filter { _ in Bool.random(using: &random) }
            guard !chosen.isEmpty || !groups.isEmpty else { continue }
            let condition: Condition? =
                switch Int.random(in: 0..<4, using: &random) {
                case 0: nil
                case 1: Field("amount") > Int64.random(in: -1_000_000...1_000_000, using: &random)
                case 2: Field("paid") == true || Field("region") == nil
                default: Field("price") <= 0.0
                }
            let having: Condition? =
                chosen.contains(.count) && Bool.random(using: &random) ? Field("count") >= 20 : nil
            let rows = try db.aggregate(Sale.self, chosen, where: condition, groupedBy: groups, having: having)
            let expected = try reference(sales, chosen, where: condition, groupedBy: groups, having: having)
            expectEqual(rows, expected, "query \(query)")
        }
    }

    struct SaleRow: Decodable, Equatable, Sendable {
        var id: Int64
        var region: String?
        var amount: Int?
        var day: Date
    }

    struct Unknown: Decodable, Sendable {
        var id: Int64
        var missing: Int
    }
    struct Mistyped: Decodable, Sendable {
        var id: Int64
        var region: Int?
    }
    struct TooStrict: Decodable, Sendable {
        var id: Int64
        var region: String
    }

    static func projections(_ db: some Database) throws {
        try db.create(AggregateChecks.edgeSales)
        let rows = try db.recover(
            SaleRow.self, from: Sale.self, where: Field("paid") == true, sortedBy: [.descending("day")])
        let expected = try db.recover(Sale.self, where: Field("paid") == true, sortedBy: [.descending("day")]).map {
            SaleRow(id: $0.id, region: $0.region, amount: $0.amount.map { Int($0) }, day: $0.day)
        }
        #expect(rows == expected && rows.count == 5)
        #expect(rows.contains { $0.region.map { Array($0.utf8) } == Array(decomposed.utf8) } == false)
        #expect(try db.recover(SaleRow.self, from: Sale.self, limit: 2, offset: 8).map(\.id) == [9])
        expectError(.unknownAttribute) { try db.recover(Unknown.self, from: Sale.self) }
        expectError(.typeMismatch) { try db.recover(Mistyped.self, from: Sale.self) }
        expectError(.typeMismatch) { try db.recover(TooStrict.self, from: Sale.self) }
    }

    /// The same aggregate query computed in plain Swift over the records — the reference every backend matches.
    static func reference(
        _ records: [Sale], _ aggregates: [Aggregate], where condition: Condition?, groupedBy groups: [String] = [],
        having: Condition? = nil
    ) throws -> [AggregateRow] {
        let layout = RecordLayout(try EntityDescription(describing: Sale.self))
        let writer = RecordWriter(layout: layout)
        let matching = try records.map { try writer.encode($0) }.filter { values in
            try condition.map { try matches($0, values, layout) } ?? true
        }
        let groupPositions = try groups.map { try layout.requirePosition(of: $0) }
        var buckets: [(key: [Value], members: [[Value]])] = groups.isEmpty ? [([], [])] : []
        for values in matching {
            let key = groupPositions.map { values[$0] }
            if let index = buckets.firstIndex(where: { sameKey($0.key, key) }) {
                buckets[index].members.append(values)
            } else {
                buckets.append((key, [values]))
            }
        }
        buckets.sort { lhs, rhs in
            for (a, b) in zip(lhs.key, rhs.key) where Value.compare(a, b) != .orderedSame {
                return Value.compare(a, b) == .orderedAscending
            }
            return false
        }
        let names = groups + aggregates.map(\.name)
        var rows: [AggregateRow] = []
        for bucket in buckets {
            var values = bucket.key
            for aggregate in aggregates {
                let present = try aggregate.attribute.map { name in
                    let position = try layout.requirePosition(of: name)
                    return bucket.members.map { $0[position] }.filter { !$0.isNull }
                }
                switch aggregate.function {
                case .count:
                    values.append(.integer(Int64(present?.count ?? bucket.members.count)))
                case .sum:
                    let items = present ?? []
                    if items.isEmpty {
                        values.append(.null)
                    } else if case .integer = items[0] {
                        values.append(.integer(items.reduce(0) { if case .integer(let i) = $1 { $0 + i } else { $0 } }))
                    } else {
                        values.append(.real(items.reduce(0.0) { $0 + (Double(storedValue: $1) ?? 0) }))
                    }
                case .average:
                    let items = present ?? []
                    if items.isEmpty {
                        values.append(.null)
                    } else if case .integer = items[0] {
                        let sum = items.reduce(Int64(0)) { if case .integer(let i) = $1 { $0 + i } else { $0 } }
                        values.append(.real(Double(sum) / Double(items.count)))
                    } else {
                        let sum = items.reduce(0.0) { $0 + (Double(storedValue: $1) ?? 0) }
                        values.append(.real(sum / Double(items.count)))
                    }
                case .min:
                    values.append(present?.min { Value.compare($0, $1) == .orderedAscending } ?? .null)
                case .max:
                    values.append(present?.max { Value.compare($0, $1) == .orderedAscending } ?? .null)
                }
            }
            let row = AggregateRow(names: names, values: values)
            if let having, !(try matchesRow(having, row)) { continue }
            rows.append(row)
        }
        return rows
    }

    private static func sameKey(_ a: [Value], _ b: [Value]) -> Bool {
        zip(a, b).allSatisfy { pair in
            switch pair {
            case let (.text(x), .text(y)): x.utf8.elementsEqual(y.utf8)
            default: pair.0.isNull == pair.1.isNull && Value.compare(pair.0, pair.1) == .orderedSame
            }
        }
    }

    /// Evaluates the simple conditions the checks use on a record's values.
    private static func matches(_ condition: Condition, _ values: [Value], _ layout: RecordLayout) throws -> Bool {
        try matches(condition) { name in values[try layout.requirePosition(of: name)] }
    }

    private static func matchesRow(_ condition: Condition, _ row: AggregateRow) throws -> Bool {
        try matches(condition) { name in
            guard let value = row[name] else { throw PersistenceError(.unknownAttribute, name) }
            return value
        }
    }

    private static func matches(_ condition: Condition, _ value: (String) throws -> Value) throws -> Bool {
        switch condition {
        case .comparison(let name, let op, let operand):
            let stored = try value(name)
            switch op {
            case .equal:
                return stored.isNull
                    ? operand.isNull : Value.compare(stored, operand) == .orderedSame && !operand.isNull
            case .notEqual:
                return
                    !(stored.isNull
                    ? operand.isNull : Value.compare(stored, operand) == .orderedSame && !operand.isNull)
            default:
                guard !stored.isNull else { return false }
                let order = Value.compare(stored, operand)
                switch op {
                case .less: return order == .orderedAscending
                case .lessOrEqual: return order != .orderedDescending
                case .greater: return order == .orderedDescending
                default: return order != .orderedAscending
                }
            }
        case .oneOf(let name, let operands):
            let stored = try value(name)
            return operands.contains { Value.compare(stored, $0) == .orderedSame && stored.isNull == $0.isNull }
        case .isNull(let name): return try value(name).isNull
        case .and(let parts): return try parts.allSatisfy { try matches($0, value) }
        case .or(let parts): return try parts.contains { try matches($0, value) }
        case .not(let inner): return try !matches(inner, value)
        case .contains, .hasPrefix, .related: throw PersistenceError(.invalidArgument, "not used by these checks")
        }
    }

    /// Rows equal, reals within a relative 1e-9 (backends sum in their own order).
    static func expectEqual(
        _ rows: [AggregateRow], _ expected: [AggregateRow], _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let same =
            rows.count == expected.count
            && zip(rows, expected).allSatisfy { row, want in
                row.names == want.names
                    && zip(row.values, want.values).allSatisfy { a, b in
                        switch (a, b) {
                        case let (.real(x), .real(y)): x == y || abs(x - y) <= 1e-9 * Swift.max(abs(x), abs(y))
                        case let (.text(x), .text(y)): x.utf8.elementsEqual(y.utf8)
                        default: a == b
                        }
                    }
            }
        #expect(same, "\(label):\n got      \(rows)\n expected \(expected)", sourceLocation: sourceLocation)
    }
}
