import Foundation
import PersistenceLMDB

/// The demo's LMDB migration step: a catalog written by version 1 of an app, opened by version 2.
enum LMDBMigrationDemo {
    static let products = 2_500

    /// The migration block version 2 ships: one closure for every older version.
    static let migration: MigrationBlock = { migration, oldSchemaVersion in
        if oldSchemaVersion < 2 {
            try migration.renameProperty(onType: "Product", from: "title", to: "name")
            try migration.enumerateObjects(ofType: "Product") { old, new in
                guard let old, let new else { return }
                let price = Double(try old.string("price") ?? "") ?? 0  // "12.50"
                try new.set("priceCents", to: Int64((price * 100).rounded()))  // 1250
            }
        }
    }

    static func builder(_ model: Model, in directory: URL, passphrase: String) -> LMDBBuilder {
        var builder = LMDBBuilder(databaseName: "Catalog", passphrase: passphrase, model: model)
        builder.directory = directory
        return builder
    }

    /// Writes the catalog at version 1, then opens it with version 2's model, block and a progress handler.
    static func run(in directory: URL, passphrase: String, console: Console) throws {
        console.step("Migration at start-up: a store written by version 1 of the app, opened by version 2")
        do {
            let v1 = try builder(CatalogV1.model, in: directory, passphrase: passphrase).create()
            try v1.create(
                (1...products).map { CatalogV1.Product(id: Int64($0), title: "Product \($0)", price: "\($0 % 90).50") })
            console.detail(
                "version 1 wrote \(products) products {id, title, price: \"12.50\"} at schema version 1, then quit")
        }
        var builder = builder(CatalogV2.model, in: directory, passphrase: passphrase)
        builder.migrationBlock = migration
        builder.migrationProgress = { progress in
            if progress.completed == progress.total || progress.completed % 1000 == 0 {
                Console.detail("  progress: \(progress)")
            }
        }
        console.detail(
            "version 2 opens it: title renamed name, price parsed into priceCents in the block, stock added (default 0)"
        )
        let db = try builder.create()
        let product = try db.recover(CatalogV2.Product.self, id: 7)
        console.detail("product 7 now: \(product.map { "\($0)" } ?? "missing")")
        let cheap = try db.count(CatalogV2.Product.self, where: Field("priceCents") < 1000)
        console.detail("products under $10.00, through the index built by the migration: \(cheap)")
        try console.check(
            product == CatalogV2.Product(id: 7, name: "Product 7", priceCents: 750, stock: 0),
            "the migrated product 7 differs from what version 2 expects")
        try console.check(cheap == (1...products).count { $0 % 90 < 10 }, "the price index disagrees")
        try console.check(try db.count(CatalogV2.Product.self) == products, "the migration lost products")
    }
}
