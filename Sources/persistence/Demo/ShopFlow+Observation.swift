import Foundation
@_spi(PersistenceBackend) import PersistenceCore

/// The observation step: a task prints the observed customer list while the flow writes; change sets and an
/// alias alongside.
extension ShopFlow {
    func observation() async throws {
        console.step("Observe: a task prints the customer list after each commit while the flow writes")
        let db = self.db
        let now = self.now
        // Each observer reports what it printed back to the flow, so the output stays in order.
        let (printed, report) = AsyncStream.makeStream(of: String.self)
        var lines = printed.makeAsyncIterator()
        let list = Task {
            for try await customers in db.observe(
                Customer.self, where: Field("tier") != "free", sortedBy: [.ascending("name")])
            {
                let line = "observer: paying customers \(customers.map(\.name))"
                Console.detail(line)
                report.yield(line)
            }
        }
        let changes = Task {
            for await change in db.changes(of: Order.self) {
                let line =
                    "changes(of: Order): inserted \(change.inserted), updated \(change.updated), deleted \(change.deleted)"
                Console.detail(line)
                report.yield(line)
            }
        }
        _ = await lines.next()  // the current list, first

        console.detail("write: Edsger upgrades to pro")
        try await db.write { context in
            guard var edsger = try context.recover(Customer.self, id: 4) else {
                throw DemoError.unexpected("no Edsger")
            }
            edsger.tier = .pro
            try context.update(edsger)
        }
        let afterUpgrade = await lines.next() ?? ""
        try console.check(afterUpgrade.contains("Edsger Dijkstra"), "the observer missed the upgrade")

        console.detail("write: two orders placed, one cancelled, in one transaction (the customer list doesn't change)")
        try await db.write { context in
            try context.create(Order(id: 20, customerID: 3, totalCents: 4_200, placedAt: now, note: nil))
            try context.create(Order(id: 21, customerID: 3, totalCents: 990, placedAt: now, note: nil))
            try context.delete(Order.self, id: 21)
        }
        let orderChange = await lines.next() ?? ""
        try console.check(orderChange.contains("inserted [20]"), "the change set should hold order 20 only")

        console.detail("alias: \"featured\" names Grace; observeAlias follows her record")
        do {
            var featured = db.observeAlias("featured", as: Customer.self).makeAsyncIterator()
            _ = try await featured.next()
            try await db.write { try $0.setAlias("featured", to: Customer.self, id: 2) }
            let grace = try await featured.next() ?? nil
            console.detail("observeAlias(\"featured\") -> \(grace.map(Console.show) ?? "nil")")
            try await db.write { try $0.removeAlias("featured") }
            let removed = try await featured.next() ?? nil
            console.detail("after removeAlias -> \(removed.map(Console.show) ?? "nil")")
            try console.check(grace?.id == 2 && removed == nil, "the alias observer")
        }

        list.cancel()
        changes.cancel()
        _ = try? await list.value
        _ = await changes.value
        report.finish()
        console.detail("observers cancelled or released: \(db.observationHub.subscriberCount) still subscribed")
        try console.check(db.observationHub.subscriberCount == 0, "an ended observation is still subscribed")
    }
}
