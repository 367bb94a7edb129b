import Foundation
import PersistenceCore

/// The object-graph step: line items under orders under customers, a cascade and a deny, eager loading with a
/// limit per customer, totals computed by the store, and a condition through a relationship.
extension ShopFlow {
    func graph() throws {
        console.step("Relationships: customers → orders → line items, loaded and totalled by the store")
        // Two line items on each order the flow has left.
        let orders: [Order] = try db.recover(sortedBy: [.ascending("id")])
        let products = ["Difference Engine", "Punched cards", "Compiler", "Moth", "Slide rule", "Abacus"]
        var items: [LineItem] = []
        for (index, order) in orders.enumerated() {
            for line in 0..<2 {
                items.append(
                    LineItem(
                        id: Int64(items.count + 1), orderID: order.id,
                        product: products[(index + line) % products.count], quantity: line + 1,
                        unitCents: order.totalCents / Int64(line + 2)))
            }
        }
        try db.create(items)
        // A line item must name an order that exists.
        do {
            try db.create(LineItem(id: 5, orderID: 999, product: "Ghost", quantity: 1, unitCents: 1))
            throw DemoError.unexpected("a line item of a missing order was stored")
        } catch let error as PersistenceError where error.code == .referenceNotFound {
            console.detail("create(LineItem(orderID: 999)) -> \(error.code)")
        }

        // Each customer with their 2 latest orders and those orders' items: three queries, whatever the count.
        let customers = try db.recover(
            Customer.self, where: Field("tier") != Customer.Tier.free.rawValue, sortedBy: [.ascending("name")],
            including: .many(
                "orders", Order.self, sortedBy: [.descending("placedAt")], limit: 2,
                including: .many("items", LineItem.self)))
        for customer in customers {
            let orders = customer.related.map { order in
                "#\(order.entity.id) (\(order.related.map(\.product).joined(separator: ", ")))"
            }
            console.detail("\(customer.entity.name): \(orders.joined(separator: "; "))")
        }
        for customer in customers {
            let latest: [Order] = try db.recover(
                where: Field("customerID") == customer.entity.id, sortedBy: [.descending("placedAt")], limit: 2)
            try console.check(
                customer.related.map(\.entity) == latest && customer.related.allSatisfy { $0.related.count == 2 },
                "each paying customer with their 2 latest orders and those orders' items")
        }

        // Totals per customer, computed where the data is.
        let totals = try db.aggregate(
            Order.self, [.count, .sum("totalCents", as: "spent")], groupedBy: ["customerID"],
            having: Field("count") >= 2)
        for row in totals {
            let customer: Int64? = try row.value("customerID")
            let spent: Int64? = try row.value("spent")
            let count: Int? = try row.value("count")
            console.detail("customer \(customer ?? 0): \(count ?? 0) orders, \(Console.money(spent ?? 0))")
        }
        try console.check(!totals.isEmpty, "customers with two orders or more")
        // The same customers asked through the relationship: one query, no records read into Swift.
        let regulars = try db.recover(Customer.self, where: Related("orders").count >= 2, sortedBy: [.ascending("id")])
        console.detail("Related(\"orders\").count >= 2 -> \(regulars.map(\.name).joined(separator: ", "))")
        let totalled = try totals.compactMap { row -> Int64? in try row.value("customerID") }
        try console.check(regulars.map(\.id) == totalled.sorted(), "a condition through a relationship")

        // Deny: a customer with orders stays. Cascade: an order takes its line items with it.
        guard let first = orders.first else { throw DemoError.unexpected("the flow left no orders") }
        do {
            try db.delete(Customer.self, id: first.customerID)
            throw DemoError.unexpected("a customer with orders was deleted")
        } catch let error as PersistenceError where error.code == .deleteDenied {
            console.detail(
                "delete(Customer.self, id: \(first.customerID)) -> \(error.code): Order.customer's rule is deny")
        }
        try db.delete(Order.self, id: first.id)
        let left = try db.count(LineItem.self, where: Field("orderID") == first.id)
        console.detail("delete(Order.self, id: \(first.id)) -> its line items went too (cascade): \(left) left")
        let kept = try db.recover(Customer.self, id: first.customerID)
        try console.check(left == 0 && kept != nil, "cascade and deny")
        try console.check(try db.verify().isSound, "no dangling references")
    }
}
