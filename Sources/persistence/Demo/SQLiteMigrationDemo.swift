import Foundation
import PersistenceSQLite

/// The demo's SQLite migration step: a catalog written by version 1 of an app, opened by version 3 — one inferred
/// step and one mapped step in one start-up.
enum SQLiteMigrationDemo {
    static let products = 2_500

    static func builder(_ model: Model, in directory: URL) -> SQLiteBuilder {
        var builder = SQLiteBuilder(databaseName: "Catalog", model: model)
        builder.directory = directory
        return builder
    }

    /// Writes the catalog at version 1, then opens it with version 3's model, plan and a progress handler.
    static func run(in directory: URL, console: Console) throws {
        console.step("Migration at start-up: a store written by version 1 of the app, opened by version 3")
        do {
            let v1 = try builder(CatalogV1.model, in: directory).create()
            try v1.create(
                (1...products).map { CatalogV1.Product(id: Int64($0), title: "Product \($0)", price: "\($0 % 90).50") })
            console.detail("version 1 wrote \(products) products {id, title, price: \"12.50\"}, then quit")
        }
        var builder = builder(CatalogSQLite.V3.model, in: directory)
        builder.migrationPlan = CatalogSQLite.plan
        builder.migrationProgress = { progress in
            if progress.completed == progress.total || progress.completed % 1000 == 0 {
                Console.detail("  progress: \(progress)")
            }
        }
        let dryRun = try builder.dryRunMigration()
        console.detail("dry run (nothing changed): \(dryRun.map { "\($0.steps.count) steps" } ?? "no migration")")
        console.detail(
            "version 3 opens it: 1 → 2 inferred (title renamed name, stock added with default 0), "
                + "2 → 3 mapped (price text → priceCents)")
        let db = try builder.create()
        for step in db.migrationReport?.steps ?? [] { console.detail("step \(step)") }
        let backup = try builder.migrationBackupFile(fromVersion: 1)
        console.detail(
            "backup of version 1 before the heavyweight step: \(backup.lastPathComponent) "
                + (FileManager.default.fileExists(atPath: backup.path) ? "(kept)" : "(missing)"))
        let product = try db.recover(CatalogSQLite.V3.Product.self, id: 7)
        console.detail("product 7 now: \(product.map { "\($0)" } ?? "missing")")
        let cheap = try db.count(CatalogSQLite.V3.Product.self, where: Field("priceCents") < 1000)
        console.detail("products under $10.00, through the index built by the migration: \(cheap)")
        try console.check(
            product == CatalogSQLite.V3.Product(id: 7, name: "Product 7", priceCents: 750, stock: 0),
            "the migrated product 7 differs from what version 3 expects")
        try console.check(cheap == (1...products).count { $0 % 90 < 10 }, "the price index disagrees")
        try console.check(try db.count(CatalogSQLite.V3.Product.self) == products, "the migration lost products")
        try console.check(db.migrationReport?.steps.map(\.kind) == [.inferred, .mapped], "the steps differ")
    }
}
