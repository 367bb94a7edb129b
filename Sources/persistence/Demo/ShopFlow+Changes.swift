import Foundation
import PersistenceCore

/// Steps that change records one operation at a time (each in its own write transaction).
extension ShopFlow {
    func update() throws {
        console.step("Update: replace the stored record with the same primary key")
        guard var alan = try db.recover(Customer.self, id: 3) else {
            throw DemoError.unexpected("customer 3 is missing")
        }
        alan.tier = .pro
        try db.update(alan)
        console.detail("after update: \(try db.recover(Customer.self, id: 3).map(Console.show) ?? "nil")")
        try console.check(try db.recover(Customer.self, id: 3)?.tier == .pro, "customer 3 should be pro")

        let ghost = Customer(id: 99, name: "Nobody", email: "nobody@example.com", tier: .free)
        try expectError(.notFound, "update of a customer that does not exist") { try db.update(ghost) }
    }

    func upsert() throws {
        console.step("Upsert: insert, or replace the record with the same primary key")
        let edsger = Customer(id: 4, name: "Edsger Dijkstra", email: "edsger@cs.example.org", tier: .free)
        let barbara = Customer(id: 5, name: "Barbara Liskov", email: "barbara@example.com", tier: .free)
        try db.upsert(edsger)
        try db.upsert(barbara)
        console.detail("replaced: \(Console.show(edsger))")
        console.detail("inserted: \(Console.show(barbara))")
        let count = try db.count(Customer.self)
        console.detail("customers now: \(count)")
        try console.check(count == 5 && (try db.recover(Customer.self, id: 4)) == edsger, "upsert results")
    }

    func constraints() throws {
        console.step("Constraints: errors are PersistenceError values; match on error.code")
        let copycat = Customer(id: 6, name: "Copycat", email: "ada@example.com", tier: .free)
        try expectError(.uniqueViolation, "a second customer with ada@example.com") { try db.create(copycat) }
        let twin = Customer(id: 1, name: "Ada's twin", email: "twin@example.com", tier: .free)
        try expectError(.duplicateKey, "a second customer with id 1") { try db.create(twin) }
        try expectError(.unknownAttribute, "a condition on an attribute that does not exist") {
            _ = try db.count(Customer.self, where: Field("nickname") == "ada")
        }
    }

    func delete() throws {
        console.step("Delete: by object, by primary key, by condition")
        guard let old = try db.recover(Order.self, id: 6) else { throw DemoError.unexpected("order 6 is missing") }
        let deletedObject = try db.delete(old)
        let deletedMissing = try db.delete(Order.self, id: 999)
        let deletedByCondition = try db.delete(Order.self, where: Field("customerID") == 3)
        console.detail("delete(order #6) -> \(deletedObject)")
        console.detail("delete(Order.self, id: 999) -> \(deletedMissing)")
        console.detail("delete(Order.self, where: customerID == 3) -> \(deletedByCondition) deleted")
        try console.check(deletedObject && !deletedMissing && deletedByCondition == 1, "delete results")
    }

    func count() throws {
        console.step("Count: all records of a type, or those matching a condition")
        let all = try db.count(Order.self)
        let ada = try db.count(Order.self, where: Field("customerID") == 1)
        console.detail("orders: \(all); orders of customer #1: \(ada)")
        try console.check(all == 4 && ada == 2, "expected 4 orders, 2 of them customer 1's")
    }

    /// Runs `body`, which must throw a ``PersistenceError`` with `code`, and shows the error.
    func expectError(_ code: PersistenceError.Code, _ what: String, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PersistenceError where error.code == code {
            console.detail("\(what): \(error)")
            return
        }
        throw DemoError.unexpected("\(what) should have failed with \(code)")
    }
}
