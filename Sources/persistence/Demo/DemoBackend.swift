import Foundation
import PersistenceCore
import PersistenceSQLite

/// The one place the demo chooses its storage backend.
///
/// Everything in `ShopFlow` is generic over `some Database`; to run the same flow on another backend, change the
/// builder in ``makeDatabase(in:)`` and the backend-native step in ``showNativeAccess(_:console:)``.
enum DemoBackend {
    /// The backend's name, for the output.
    static let name = "SQLite"

    /// Builds the shop's database in `directory`.
    static func makeDatabase(in directory: URL) throws -> SQLiteDatabase {
        var builder = SQLiteBuilder(databaseName: "Shop", model: ShopModel.current)
        builder.directory = directory
        return try builder.create()
    }

    /// Where the store's main file is, for the output.
    static func location(of database: SQLiteDatabase) -> String {
        database.fileURL?.path ?? "(in memory)"
    }

    /// The backend's own access, in the same transaction as typed operations: raw SQL with bound arguments.
    static func showNativeAccess(_ database: SQLiteDatabase, console: Console) throws {
        console.step("Raw SQL through SQLiteContext, inside a read block")
        // Identifiers are quoted: "Order" is an SQL keyword. Values are bound to `?`, never spliced into the text.
        let sql = """
            SELECT c."name" AS name, count(o."id") AS orders, coalesce(sum(o."totalCents"), 0) AS spent
            FROM "Customer" AS c LEFT JOIN "Order" AS o ON o."customerID" = c."id"
            GROUP BY c."id" ORDER BY spent DESC, c."id" LIMIT ?
            """
        let (rows, typedCount) = try database.read { context in
            // Raw SQL and typed operations see the same snapshot.
            (try context.rows(sql, [.integer(3)]), try context.count(Customer.self))
        }
        console.detail("top \(rows.count) of \(typedCount) customers by spend:")
        for row in rows {
            let name = row["name"].map(Console.show) ?? "?"
            let orders = row["orders"].map(Console.show) ?? "?"
            let spent: String
            if case .integer(let cents)? = row["spent"] { spent = Console.money(cents) } else { spent = "?" }
            console.detail("  \(name): spent \(spent) in \(orders) order(s)")
        }
        try console.check(rows.count == min(3, typedCount), "the SQL query returned \(rows.count) rows")
    }
}
