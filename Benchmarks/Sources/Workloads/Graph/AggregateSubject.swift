public import Foundation
import PersistenceCore
import RawSQLite

/// A1's data: `count` sales by 100 customers, with amounts and prices from a fixed seed, and the answers the three
/// queries must give, computed here in Swift.
public struct AggregateInput: Sendable {
    public let sales: [Sale]
    /// `count(*) WHERE amount > 500`.
    public let largeCount: Int64
    /// `sum(amount)`.
    public let totalAmount: Int64
    /// Per customer, in customer order: (customer, count, sum(amount), sum(price)).
    public let perCustomer: [Group]

    public struct Group: Sendable, Equatable {
        public var customer: Int64
        public var count: Int64
        public var amount: Int64
        public var price: Double
    }

    public init(count: Int) {
        var generator = SplitMix64(seed: 0xA1)
        var sales: [Sale] = []
        sales.reserveCapacity(count)
        var groups = (0..<100).map { Group(customer: Int64($0), count: 0, amount: 0, price: 0) }
        var large: Int64 = 0
        var total: Int64 = 0
        for id in 1...Swift.max(1, count) {
            let sale = Sale(
                id: Int64(id), customer: Int64(id % 100), amount: Int64(generator.next(below: 1_000)),
                price: Double(generator.next(below: 100_000)) / 100)
            sales.append(sale)
            if sale.amount > 500 { large += 1 }
            total += sale.amount
            groups[Int(sale.customer)].count += 1
            groups[Int(sale.customer)].amount += sale.amount
            groups[Int(sale.customer)].price += sale.price
        }
        self.sales = sales
        largeCount = large
        totalAmount = total
        perCustomer = groups.filter { $0.count > 0 }
    }
}

/// A1: three aggregate queries in one read — a count with a condition, a sum, and a `GROUP BY` of 100 customers
/// with a count and two sums — over `count` records.
///
/// Raw is the same SQL through the C API (prepared, bound by index, columns read by index); ours is
/// `context.count(_:where:)`, `context.sum` and `context.aggregate(_:_:groupedBy:)`. The LMDB rows make the same calls
/// (one streaming pass per query), for information.
public enum AggregateSubject: String, CaseIterable, Sendable {
    case raw = "raw"
    case ours = "ours"
    case oursLMDBPlain = "ours-lmdb-plain"
    case oursLMDBEncrypted = "ours-lmdb-encrypted"

    /// The workload id of the rows.
    public static let workload = "A1"

    /// Fills a store in `directory` (empty), reopens it, times the read with the three queries, and checks every
    /// answer against the input's.
    public func run(_ input: AggregateInput, directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let (answers, seconds): (Answers, Double)
        if self == .raw {
            try RawAggregateStore(directory: directory).fill(input.sales)
            let store = try RawAggregateStore(directory: directory)
            (answers, seconds) = try Stopwatch.time { try store.answers() }
        } else {
            let filling = try open(directory)
            try filling.write { context in try context.create(input.sales) }
            try filling.close()
            let db = try open(directory)
            (answers, seconds) = try Stopwatch.time { try Self.answers(db) }
            try db.close()
        }
        try verify.expect(answers.largeCount == input.largeCount, "count: \(answers.largeCount)")
        try verify.expect(answers.totalAmount == input.totalAmount, "sum: \(answers.totalAmount)")
        try verify.expect(answers.perCustomer.count == input.perCustomer.count, "groups: \(answers.perCustomer.count)")
        for (got, want) in zip(answers.perCustomer, input.perCustomer) {
            try verify.expect(
                got.customer == want.customer && got.count == want.count && got.amount == want.amount
                    && abs(got.price - want.price) <= 1e-9 * Swift.max(1, abs(want.price)),
                "customer \(want.customer): \(got), expected \(want)")
        }
        return seconds
    }

    struct Answers {
        var largeCount: Int64 = 0
        var totalAmount: Int64 = 0
        var perCustomer: [AggregateInput.Group] = []
    }

    private static func answers(_ db: any Database) throws -> Answers {
        try db.read { context in
            var answers = Answers()
            answers.largeCount = Int64(try context.count(Sale.self, where: Field("amount") > 500))
            answers.totalAmount = try context.sum(Sale.self, "amount", as: Int64.self) ?? 0
            let rows = try context.aggregate(
                Sale.self, [.count, .sum("amount"), .sum("price")], groupedBy: ["customer"])
            answers.perCustomer = try rows.map { row in
                AggregateInput.Group(
                    customer: try row.value("customer") ?? -1, count: try row.value("count") ?? -1,
                    amount: try row.value("sum(amount)") ?? -1, price: try row.value("sum(price)") ?? -1)
            }
            return answers
        }
    }

    private func open(_ directory: URL) throws -> any PersistenceCore.Database {
        let store: OursGraphStore =
            switch self {
            case .ours, .raw: .sqlite
            case .oursLMDBPlain: .lmdbPlain
            case .oursLMDBEncrypted: .lmdbEncrypted
            }
        return try store.open(directory, [Sale.self])
    }
}

/// A1's raw baseline: the table ours creates (an integer primary key, no other index), queried through the C API.
final class RawAggregateStore {
    private let connection: RawSQLiteConnection

    init(directory: URL) throws {
        connection = try RawSQLiteConnection.durable(
            "raw.sqlite", in: directory,
            schema: """
                CREATE TABLE IF NOT EXISTS sale (id INTEGER PRIMARY KEY, customer INTEGER NOT NULL,
                    amount INTEGER NOT NULL, price REAL NOT NULL)
                """)
    }

    func fill(_ sales: [Sale]) throws {
        try connection.execute("BEGIN IMMEDIATE")
        let insert = try connection.prepare("INSERT INTO sale (id, customer, amount, price) VALUES (?, ?, ?, ?)")
        for sale in sales {
            try connection.bind(sale.id, at: 1, insert)
            try connection.bind(sale.customer, at: 2, insert)
            try connection.bind(sale.amount, at: 3, insert)
            try connection.bind(sale.price, at: 4, insert)
            _ = try connection.step(insert)
            sqlite3_reset(insert)
        }
        try connection.execute("COMMIT")
    }

    /// The timed operation: one read transaction with the three queries.
    func answers() throws -> AggregateSubject.Answers {
        var answers = AggregateSubject.Answers()
        try connection.execute("BEGIN")
        defer { try? connection.execute("COMMIT") }
        let large = try connection.prepare("SELECT count(*) FROM sale WHERE amount > ?")
        try connection.bind(Int64(500), at: 1, large)
        if try connection.step(large) { answers.largeCount = sqlite3_column_int64(large, 0) }
        sqlite3_reset(large)
        let total = try connection.prepare("SELECT sum(amount) FROM sale")
        if try connection.step(total) { answers.totalAmount = sqlite3_column_int64(total, 0) }
        sqlite3_reset(total)
        let groups = try connection.prepare(
            "SELECT customer, count(*), sum(amount), sum(price) FROM sale GROUP BY customer ORDER BY customer")
        while try connection.step(groups) {
            answers.perCustomer.append(
                AggregateInput.Group(
                    customer: sqlite3_column_int64(groups, 0), count: sqlite3_column_int64(groups, 1),
                    amount: sqlite3_column_int64(groups, 2), price: sqlite3_column_double(groups, 3)))
        }
        sqlite3_reset(groups)
        return answers
    }
}
