import Foundation
import PersistenceCore

/// The demo's app flow, written once against `some Database`: nothing here knows which backend runs it.
struct ShopFlow<DB: Database> {
    let db: DB
    let console: Console
    /// One fixed "now", so every step agrees on what "3 days ago" means.
    let now: Date

    /// Runs every step in order; throws at the first unexpected result.
    func run() async throws {
        try startEmpty()
        try insert()
        try queryByKeyValue()
        try queryByConditions()
        try update()
        try upsert()
        try constraints()
        try delete()
        try count()
        try writeBlock()
        try rollback()
        try await concurrentAsync()
        try await observation()
        try editorCancel()
        try reconcile()
        try graph()
    }

    /// A date `days` before ``now``.
    func daysAgo(_ days: Double) -> Date { now.addingTimeInterval(-days * 86_400) }

    // MARK: - Steps

    private func startEmpty() throws {
        console.step("Start from an empty store (a rerun with --directory reuses the file)")
        let orders = try db.deleteAll(Order.self)
        let customers = try db.deleteAll(Customer.self)
        console.detail("removed \(customers) customers and \(orders) orders left by an earlier run")
    }

    private func insert() throws {
        console.step("Insert: db.create(_:) with a sequence is one write transaction, all or none")
        let customers = [
            Customer(id: 1, name: "Ada Lovelace", email: "ada@example.com", tier: .pro),
            Customer(id: 2, name: "Grace Hopper", email: "grace@example.com", tier: .enterprise),
            Customer(id: 3, name: "Alan Turing", email: "alan@example.com", tier: .free),
            Customer(id: 4, name: "Edsger Dijkstra", email: "edsger@example.com", tier: .free),
        ]
        let orders = [
            Order(id: 1, customerID: 1, totalCents: 12_500, placedAt: daysAgo(2), note: "gift wrap"),
            Order(id: 2, customerID: 1, totalCents: 3_999, placedAt: daysAgo(40), note: nil),
            Order(id: 3, customerID: 2, totalCents: 89_000, placedAt: daysAgo(5), note: nil),
            Order(id: 4, customerID: 2, totalCents: 15_050, placedAt: daysAgo(12), note: "rush"),
            Order(id: 5, customerID: 3, totalCents: 2_500, placedAt: daysAgo(1), note: nil),
            Order(id: 6, customerID: 4, totalCents: 7_300, placedAt: daysAgo(60), note: nil),
        ]
        try db.create(customers)
        try db.create(orders)
        for customer in customers { console.detail(Console.show(customer)) }
        for order in orders { console.detail(Console.show(order, now: now)) }
        let stored: [Customer] = try db.recover()
        try console.check(stored == customers, "the customers read back differ from those inserted")
    }

    private func queryByKeyValue() throws {
        console.step("Query by key:value, and by primary key")
        let free: [Customer] = try db.recover(key: "tier", value: Customer.Tier.free.rawValue)
        console.detail("recover(key: \"tier\", value: \"free\") -> \(free.map(\.name))")
        try console.check(free.map(\.id) == [3, 4], "expected customers 3 and 4 on the free tier")

        let grace = try db.recover(Customer.self, id: 2)
        console.detail("recover(Customer.self, id: 2) -> \(grace.map(Console.show) ?? "nil")")
        let missing = try db.recover(Customer.self, id: 42)
        console.detail("recover(Customer.self, id: 42) -> \(missing.map(Console.show) ?? "nil")")
        try console.check(grace?.name == "Grace Hopper" && missing == nil, "lookup by primary key")
    }

    private func queryByConditions() throws {
        console.step("Query by conditions, with sort and limit")
        let bigAndRecent: [Order] = try db.recover(
            where: Field("totalCents") >= 5_000 && Field("placedAt") >= daysAgo(30),
            sortedBy: [.descending("totalCents")],
            limit: 2
        )
        console.detail("orders >= $50.00 in the last 30 days, largest first, limit 2:")
        for order in bigAndRecent { console.detail("  " + Console.show(order, now: now)) }
        try console.check(bigAndRecent.map(\.id) == [3, 4], "expected orders 3 then 4")

        // `==` and `!=` treat nil as a value: `!= "rush"` also matches orders with no note.
        let noNote = try db.count(Order.self, where: Field("note") == nil)
        let notRush = try db.count(Order.self, where: Field("note") != "rush")
        console.detail("note == nil: \(noNote) orders; note != \"rush\": \(notRush) orders (nil included)")
        try console.check(noNote == 4 && notRush == 5, "null-safe comparisons")

        // Text matching is case-sensitive and compares UTF-8 bytes.
        let startsWithA: [Customer] = try db.recover(
            where: Field("name").hasPrefix("A"), sortedBy: [.ascending("name")])
        let lowercase = try db.count(Customer.self, where: Field("name").hasPrefix("a"))
        console.detail("name hasPrefix \"A\": \(startsWithA.map(\.name)); hasPrefix \"a\": \(lowercase)")
        try console.check(startsWithA.map(\.id) == [1, 3] && lowercase == 0, "case-sensitive prefix match")

        let paying: [Customer] = try db.recover(where: Field("tier").in(["pro", "enterprise"]))
        console.detail("tier in [pro, enterprise]: \(paying.map(\.name))")
        try console.check(paying.map(\.id) == [1, 2], "expected customers 1 and 2 to be paying")
    }
}
