import Foundation
import PersistenceCore

/// The write-semantics steps: an editor's Cancel, a savepoint, a reconcile with a server's snapshot.
extension ShopFlow {
    func editorCancel() throws {
        console.step("Edit: an editor screen changes a customer, previews it, then Cancel throws it all away")
        let before = try db.recover(Customer.self, id: 1)
        let cancelled = try db.edit { context in
            guard var ada = try context.recover(Customer.self, id: 1) else { throw DemoError.unexpected("no Ada") }
            ada.name = "Ada King"
            ada.tier = .enterprise
            try context.update(ada)
            // The edit reads its own changes back: the preview shows the edited record.
            let preview = try context.recover(Customer.self, id: 1)
            console.detail("preview inside the edit: \(preview.map(Console.show) ?? "nil")")
            return .discard  // the user tapped Cancel
        }
        let after = try db.recover(Customer.self, id: 1)
        console.detail("db.edit { … return .discard } -> .\(cancelled); stored: \(after.map(Console.show) ?? "nil")")
        try console.check(cancelled == .discard && after == before, "a discarded edit changed the store")

        console.step("Savepoint: a step of a write fails on its own; the rest of the write commits")
        try db.write { context in
            try context.create(Order(id: 30, customerID: 2, totalCents: 12_000, placedAt: now, note: "with coupon"))
            let taken = try context.recover(Customer.self, id: 1)?.email ?? ""
            do {
                // A referral discount: the order gets 25% off if the referred friend can sign up.
                try context.savepoint {
                    try context.update(Order(id: 30, customerID: 2, totalCents: 9_000, placedAt: now, note: "-25%"))
                    // The friend's email is taken (unique index): the insert fails and the savepoint rolls back.
                    try context.create(Customer(id: 99, name: "Referred friend", email: taken, tier: .free))
                }
            } catch let error as PersistenceError where error.code == .uniqueViolation {
                console.detail("savepoint rolled back (\(error.code)); the order keeps its full price")
            }
        }
        let order = try db.recover(Order.self, id: 30)
        console.detail("order 30 after commit: \(order.map { Console.show($0, now: now) } ?? "nil")")
        try console.check(order?.totalCents == 12_000, "the savepoint's update survived its rollback")
    }

    func reconcile() throws {
        console.step("Reconcile: make Grace's stored orders equal to the server's list, in one transaction")
        let scope = Field("customerID") == 2
        var server = try db.recover(Order.self, where: scope)
        console.detail("stored for Grace: \(server.map(\.id))")
        // The server's snapshot: one order changed, the first one gone, one new.
        server.removeFirst()
        server[0].note = "gift wrapped"
        server.append(Order(id: 40, customerID: 2, totalCents: 2_500, placedAt: now, note: nil))
        let counts = try db.reconcile(Order.self, with: server, where: scope)
        console.detail("db.reconcile(Order.self, with: server, where: customerID == 2) -> \(counts)")
        let stored = try db.recover(Order.self, where: scope)
        try console.check(
            stored == server.sorted { $0.id < $1.id } && counts.inserted == 1 && counts.updated == 1
                && counts.deleted == 1, "the reconciled orders differ from the server's")
        try console.check(try db.count(Order.self, where: Field("customerID") == 1) > 0, "another customer's orders")
    }
}

/// A per-user store next to the shared one: opened after sign-in, closed and deleted at sign-out.
enum PerUserStoreDemo {
    static func run<DB: FileBackedDatabase>(
        in directory: URL, console: Console, open: (String) throws -> DB
    ) throws {
        console.step("Per-user store: open one at sign-in, close and delete it at sign-out")
        let name = "user-42"
        let user = try open(name)
        try user.create(Customer(id: 42, name: "Signed-in user", email: "user42@example.com", tier: .pro))
        console.detail("stores in the directory: \(try DB.storeNames(in: directory))")
        do {
            try DB.deleteStore(named: name, in: directory)
            throw DemoError.unexpected("an open store was deleted")
        } catch let error as PersistenceError where error.code == .storeInUse {
            console.detail("deleteStore while open -> \(error.code)")
        }
        try user.close()
        do {
            _ = try user.count(Customer.self)
            throw DemoError.unexpected("a closed database answered")
        } catch let error as PersistenceError where error.code == .closed {
            console.detail("a read after close() -> \(error.code)")
        }
        let deleted = try DB.deleteStore(named: name, in: directory)
        let remaining = try DB.storeNames(in: directory)
        console.detail("sign-out: close(), deleteStore(named: \"\(name)\") -> \(deleted); stores left: \(remaining)")
        try console.check(deleted && !remaining.contains(name), "the per-user store is still there")
        let fresh = try open(name)
        try console.check(try fresh.count(Customer.self) == 0, "a reused name should start empty")
        try fresh.close()
        try DB.deleteStore(named: name, in: directory)
    }
}
