import Foundation
import PersistencePostgres

/// What is PostgreSQL's own: a server's URL, raw SQL with `$n` parameters, and writers on other connections whose
/// collisions are thrown, never silently re-run.
enum PostgresDemo {
    /// The builder for the demo's schema on the server `url` (or `PERSISTENCE_POSTGRES_URL`) names.
    static func builder(url: String?) throws -> PostgresBuilder {
        guard let url = url ?? ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"], !url.isEmpty else {
            throw DemoError.unexpected(
                "the PostgreSQL demo needs a server: pass --url postgres://… or set PERSISTENCE_POSTGRES_URL "
                    + "(`make demo-postgres` starts a throw-away one)")
        }
        var builder = try PostgresBuilder(url: url, model: ShopModel.current)
        builder.schema = "persistence_demo"
        return builder
    }

    /// Raw SQL in a read block: `$n` parameters, and text stored as UTF-8 bytes read back with `convert_from`.
    static func showRawSQL(_ db: PostgresDatabase, console: Console) throws {
        console.step("Raw SQL through PostgresContext, inside a read block")
        let sql = """
            SELECT convert_from(c."name", 'UTF8') AS name, count(o."id") AS orders
            FROM "persistence_demo"."Customer" AS c LEFT JOIN "persistence_demo"."Order" AS o ON o."customerID" = c."id"
            GROUP BY c."id" ORDER BY orders DESC, c."id" LIMIT $1
            """
        let (rows, typedCount) = try db.read { context in
            (try context.rows(sql, [.integer(3)]), try context.count(Customer.self))
        }
        console.detail("top \(rows.count) of \(typedCount) customers by orders (text is UTF-8 in bytea):")
        for row in rows {
            console.detail(
                "  \(row["name"].map(Console.show) ?? "?"): \(row["orders"].map(Console.show) ?? "?") order(s)")
        }
        try console.check(rows.count == min(3, typedCount), "the SQL query returned \(rows.count) rows")
    }

    /// Two app servers change one record at once: one write is rolled back with `conflict` (its block ran once), and
    /// `write(retryingUpTo:)` — the explicit opt-in — runs it again.
    static func showConflict(_ builder: PostgresBuilder, _ db: PostgresDatabase, console: Console) throws {
        console.step("Two servers change one order at once: a conflict is thrown, and retried only when asked")
        let other = try builder.create()
        defer { try? other.close() }
        guard let id = try db.recover(Order.self, limit: 1).first?.id else {
            throw DemoError.unexpected("the shop has no order")
        }
        /// Adds 5.00 to the order; on its first run, another server adds 1.00 between the read and the write.
        func addFive(_ write: ((PostgresContext) throws -> Void) throws -> Void) throws -> Int {
            var runs = 0
            try write { context in
                runs += 1
                guard var order = try context.recover(Order.self, id: id) else { return }
                if runs == 1 {
                    let done = DispatchSemaphore(value: 0)
                    Thread.detachNewThread {
                        _ = try? other.write { context in
                            guard var changed = try context.recover(Order.self, id: id) else { return }
                            changed.totalCents += 100
                            try context.update(changed)
                        }
                        done.signal()
                    }
                    done.wait()
                }
                order.totalCents += 500
                try context.update(order)
            }
            return runs
        }
        let before = try db.recover(Order.self, id: id)?.totalCents ?? 0
        do {
            _ = try addFive { body in try db.write(body) }
            throw DemoError.unexpected("the colliding write committed")
        } catch let error as PersistenceError where error.code == .conflict {
            console.detail(
                "write { … } -> \(error.code): rolled back whole; its block ran once (isRetryable: \(error.isRetryable))"
            )
        }
        let runs = try addFive { body in try db.write(retryingUpTo: 3, body) }
        let after = try db.recover(Order.self, id: id)?.totalCents ?? 0
        console.detail(
            "write(retryingUpTo: 3) { … }: the block ran \(runs) times; total \(Console.money(before)) -> "
                + Console.money(after))
        try console.check(after == before + 100 + 100 + 500, "expected two changes elsewhere and one here")
    }
}
