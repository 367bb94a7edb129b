import Foundation
import PersistenceCore
import Testing

/// Edge values compare, index and sort the same on every backend: what compares equal is found by the same
/// equality condition whether an index or a scan answers it, and orderings follow ``Value/compare(_:_:)``.
enum EdgeValueChecks {
    static let all: [ConformanceCheck] = [
        .database("finds 0.0 and -0.0 as one value, indexed or not") { try signedZero($0) },
        .database("answers equality on edge values the same through an index and a scan") { try equality($0) },
        .database("answers ordering comparisons on edge values as the core compares") { try comparisons($0) },
        .database("sorts edge values and nil both ways as the core compares") { try sorting($0) },
        .database("round-trips edge values") { try roundTrip($0) },
    ]

    static let reals: [Double] = [
        0.0, -0.0, 1.0, -1.0, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, 0.1 + 0.2, 9_007_199_254_740_992,
    ]
    static let integers: [Int64] = [0, 1, -1, .max, .min, .max - 1, .min + 1, 1 << 53, (1 << 53) + 1]
    static let texts: [String] = [
        "", "\0", "a\0b", "a", "A", "é", "e\u{301}", "😀", "Ω", "zz", "\u{FFFF}", String(repeating: "x", count: 600),
    ]
    static let blobs: [Data] = [Data(), Data([0]), Data([0, 0]), Data([255]), Data([1, 2, 3]), Data(count: 600)]

    /// One record per edge value of every class, plus records whose every attribute is `nil`; ids from 1.
    static func records() -> [EdgeValues] {
        var records: [EdgeValues] = []
        func add(_ make: (Int64) -> EdgeValues) { records.append(make(Int64(records.count + 1))) }
        for real in reals { add { EdgeValues(id: $0, real: real) } }
        for integer in integers { add { EdgeValues(id: $0, integer: integer) } }
        for text in texts { add { EdgeValues(id: $0, text: text) } }
        for blob in blobs { add { EdgeValues(id: $0, blob: blob) } }
        add { EdgeValues(id: $0) }
        add { EdgeValues(id: $0) }
        return records
    }

    /// The stored value of `attribute` in `record`, through the same conversion a condition's argument takes.
    static func value(_ record: EdgeValues, _ attribute: String) -> Value {
        switch attribute {
        case "real", "realCopy": record.real.map(\.storedValue) ?? .null
        case "integer", "integerCopy": record.integer.map(\.storedValue) ?? .null
        case "text", "textCopy": record.text.map(\.storedValue) ?? .null
        default: record.blob.map(\.storedValue) ?? .null
        }
    }

    /// Each indexed attribute with its unindexed copy and the edge values of its class.
    static func attributes() -> [(indexed: String, copy: String, values: [Value])] {
        [
            ("real", "realCopy", reals.map { .real($0) }),
            ("integer", "integerCopy", integers.map(\.storedValue)),
            ("text", "textCopy", texts.map(\.storedValue)),
            ("blob", "blobCopy", blobs.map(\.storedValue)),
        ]
    }

    static func ids(_ db: some Database, _ condition: Condition) throws -> [Int64] {
        let found: [EdgeValues] = try db.recover(where: condition)
        return found.map(\.id)
    }

    /// The ids of `records` whose `attribute` compares to `value` with `accepts`, never the `nil`s (ordering
    /// comparisons don't match `nil`).
    static func expected(
        _ records: [EdgeValues], _ attribute: String, _ value: Value, _ accepts: (ComparisonResult) -> Bool
    ) -> [Int64] {
        records.filter {
            let stored = self.value($0, attribute)
            return !stored.isNull && accepts(Value.compare(stored, value))
        }.map(\.id)
    }

    static func signedZero(_ db: some Database) throws {
        try db.create([
            EdgeValues(id: 1, real: 0.0), EdgeValues(id: 2, real: -0.0), EdgeValues(id: 3, real: 1.0),
            EdgeValues(id: 4),
        ])
        for attribute in ["real", "realCopy"] {
            #expect(try ids(db, Field(attribute) == 0.0) == [1, 2], "\(attribute) == 0.0")
            #expect(try ids(db, Field(attribute) == -0.0) == [1, 2], "\(attribute) == -0.0")
            #expect(try ids(db, .comparison(attribute, .equal, .real(-0.0))) == [1, 2], "\(attribute), raw -0.0")
            #expect(try ids(db, Field(attribute).in([-0.0])) == [1, 2], "\(attribute) in [-0.0]")
            #expect(try ids(db, .oneOf(attribute, [.real(-0.0), .real(1)])) == [1, 2, 3], "\(attribute) in raw")
            #expect(try ids(db, Field(attribute) != -0.0) == [3, 4], "\(attribute) != -0.0")
            #expect(try ids(db, Field(attribute) < 0.0) == [], "\(attribute) < 0.0: -0.0 is not less")
            #expect(try ids(db, Field(attribute) >= -0.0) == [1, 2, 3], "\(attribute) >= -0.0")
            #expect(try db.count(EdgeValues.self, where: Field(attribute) == -0.0) == 2)
        }
        let stored = try db.recover(EdgeValues.self, id: 2)
        #expect(stored?.real == 0, "-0.0 reads back as zero")
        #expect(stored?.real?.sign == .plus, "-0.0 is stored as 0.0 on every backend")
    }

    static func equality(_ db: some Database) throws {
        let records = records()
        try db.create(records)
        for (indexed, copy, values) in attributes() {
            for value in values {
                let expected = expected(records, indexed, value) { $0 == .orderedSame }
                #expect(try ids(db, .comparison(indexed, .equal, value)) == expected, "\(indexed) == edge value")
                #expect(try ids(db, .comparison(copy, .equal, value)) == expected, "\(copy) == edge value")
                #expect(try ids(db, .oneOf(indexed, [value, .null])) == (expected + nilIDs(records, indexed)).sorted())
                #expect(try db.count(EdgeValues.self, where: .comparison(indexed, .equal, value)) == expected.count)
            }
            #expect(try ids(db, Field(indexed) == nil) == nilIDs(records, indexed), "\(indexed) == nil")
        }
    }

    static func nilIDs(_ records: [EdgeValues], _ attribute: String) -> [Int64] {
        records.filter { value($0, attribute).isNull }.map(\.id)
    }

    static func comparisons(_ db: some Database) throws {
        let records = records()
        try db.create(records)
        let operators: [(ComparisonOperator, (ComparisonResult) -> Bool)] = [
            (.less, { $0 == .orderedAscending }), (.lessOrEqual, { $0 != .orderedDescending }),
            (.greater, { $0 == .orderedDescending }), (.greaterOrEqual, { $0 != .orderedAscending }),
        ]
        for (indexed, copy, values) in attributes() {
            for value in values {
                for (op, accepts) in operators {
                    let expected = expected(records, indexed, value, accepts)
                    #expect(try ids(db, .comparison(indexed, op, value)) == expected, "\(indexed) \(op.rawValue)")
                    #expect(try ids(db, .comparison(copy, op, value)) == expected, "\(copy) \(op.rawValue)")
                }
            }
        }
    }

    static func sorting(_ db: some Database) throws {
        let records = records()
        try db.create(records)
        for (indexed, copy, _) in attributes() {
            // Ties (nils, 0.0 with -0.0, other classes' records) fall back to the primary key, ascending.
            let ascending = sortedIDs(records, by: indexed, ascending: true)
            let descending = sortedIDs(records, by: indexed, ascending: false)
            for attribute in [indexed, copy] {
                let up: [EdgeValues] = try db.recover(sortedBy: [.ascending(attribute)])
                let down: [EdgeValues] = try db.recover(sortedBy: [.descending(attribute)])
                #expect(up.map(\.id) == ascending, "ascending by \(attribute): nil first")
                #expect(down.map(\.id) == descending, "descending by \(attribute): nil last")
            }
        }
    }

    /// The ids of `records` sorted by `attribute` as the core compares, ties by primary key ascending.
    static func sortedIDs(_ records: [EdgeValues], by attribute: String, ascending: Bool) -> [Int64] {
        records.sorted {
            switch Value.compare(value($0, attribute), value($1, attribute)) {
            case .orderedAscending: ascending
            case .orderedDescending: !ascending
            case .orderedSame: $0.id < $1.id
            }
        }.map(\.id)
    }

    static func roundTrip(_ db: some Database) throws {
        let records = records()
        try db.create(records)
        let stored: [EdgeValues] = try db.recover()
        #expect(stored.count == records.count)
        for (written, read) in zip(records, stored) {
            #expect(read.id == written.id)
            #expect(read.real == written.real, "real of record \(written.id)")
            #expect(read.real?.sign == written.real.map { $0 == 0 ? .plus : $0.sign }, "sign of \(written.id)")
            #expect(read.integer == written.integer)
            #expect(read.text.map { Array($0.utf8) } == written.text.map { Array($0.utf8) }, "text bytes")
            #expect(read.blob == written.blob)
        }
    }
}
