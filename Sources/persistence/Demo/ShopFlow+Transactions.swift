import Foundation
import PersistenceCore

/// Steps about transactions: write blocks, rollback, and the async API.
extension ShopFlow {
    func writeBlock() throws {
        console.step("A write block: several operations, one atomic transaction, a returned result")
        let order = Order(id: 7, customerID: 5, totalCents: 60_000, placedAt: now, note: "first order")
        let tier = try db.write { context -> Customer.Tier in
            try context.create(order)
            guard var customer = try context.recover(Customer.self, id: order.customerID) else {
                throw DemoError.unexpected("customer 5 is missing")
            }
            // Reads inside a write see the write's own changes, including the order just created.
            let history: [Order] = try context.recover(where: Field("customerID") == customer.id)
            let spent = history.reduce(0) { $0 + $1.totalCents }
            if spent >= 50_000, customer.tier == .free {
                customer.tier = .pro
                try context.update(customer)
            }
            return customer.tier
        }
        console.detail("placed \(Console.show(order, now: now)); customer #5 is now \(tier.rawValue)")
        try console.check(tier == .pro && (try db.recover(Customer.self, id: 5))?.tier == .pro, "upgrade")
    }

    func rollback() throws {
        console.step("Rollback: a write that throws midway changes nothing")
        let ordersBefore = try db.count(Order.self)
        let graceBefore = try db.recover(Customer.self, id: 2)
        console.detail("before: \(ordersBefore) orders; Grace is \(graceBefore?.tier.rawValue ?? "missing")")
        do {
            try db.write { context in
                try context.create(Order(id: 8, customerID: 2, totalCents: 1_000, placedAt: now, note: nil))
                try context.create(Order(id: 9, customerID: 2, totalCents: 2_000, placedAt: now, note: nil))
                if var grace = try context.recover(Customer.self, id: 2) {
                    grace.tier = .free
                    try context.update(grace)
                }
                console.detail("inside the block: \(try context.count(Order.self)) orders, then the payment fails")
                throw DemoError.paymentDeclined
            }
        } catch DemoError.paymentDeclined {
            console.detail("the write threw \"\(DemoError.paymentDeclined)\" and was rolled back")
        }
        let ordersAfter = try db.count(Order.self)
        let graceAfter = try db.recover(Customer.self, id: 2)
        console.detail("after: \(ordersAfter) orders; Grace is \(graceAfter?.tier.rawValue ?? "missing")")
        try console.check(ordersAfter == ordersBefore && graceAfter == graceBefore, "the rollback left changes")
    }

    func concurrentAsync() async throws {
        console.step("Async: writes and reads from several tasks, off the cooperative thread pool")
        let before = try await db.read { try $0.count(Order.self) }
        let placedAt = daysAgo(0.5)
        // Tasks capture the database (Sendable), never `self`, which holds the non-Sendable console.
        let db = self.db
        let lines = try await withThrowingTaskGroup(of: String.self) { group in
            for task in 1...4 {
                let order = Order(
                    id: Int64(100 + task), customerID: Int64(task), totalCents: Int64(task) * 1_000,
                    placedAt: placedAt, note: "from task \(task)")
                group.addTask {
                    // Each write is its own transaction. Embedded stores run them one at a time; PostgreSQL runs them
                    // at once, serializably, and may roll one back with `conflict` (each counts every order): retried
                    // here, explicitly, since the block is safe to run again.
                    let total = try await db.write(retrying: .collisions(for: .seconds(60))) { context in
                        try context.create(order)
                        return try context.count(Order.self)
                    }
                    return "task \(task) wrote order #\(order.id); \(total) orders in its transaction"
                }
            }
            for task in 1...2 {
                group.addTask {
                    // Reads run concurrently, each on a consistent snapshot.
                    let seen = try await db.read { try $0.count(Order.self) }
                    return "reader \(task) saw \(seen) orders"
                }
            }
            var lines: [String] = []
            for try await line in group { lines.append(line) }
            return lines.sorted()
        }
        for line in lines { console.detail(line) }
        let after = try await db.read { try $0.count(Order.self) }
        console.detail("orders: \(before) before, \(after) after")
        try console.check(after == before + 4, "expected 4 more orders after the async writes")
    }
}
