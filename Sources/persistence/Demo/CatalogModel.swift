import Foundation
import PersistenceCore

/// The demo's product catalog as version 1 of an app shipped it: the price as text, as it came from a feed.
enum CatalogV1 {
    struct Product: Entity, Equatable {
        var id: Int64
        var title: String
        var price: String
        static let indexes: [Index] = [.on("title")]
    }

    static let model = Model(version: 1, entities: [Product.self])
}

/// The catalog in version 2: `title` renamed `name`, the price in integer cents, and a stock count that old
/// products start at 0 (a declared default).
enum CatalogV2 {
    struct Product: Entity, Equatable {
        var id: Int64
        var name: String
        var priceCents: Int64
        var stock: Int
        static let indexes: [Index] = [.on("name"), .on("priceCents")]
        static let defaultValues: [String: Value] = ["stock": 0]
    }

    static let model = Model(version: 2, entities: [Product.self])

}

/// The SQLite app's versions of the catalog: version 2 renamed `title` to `name` and added a stock count (both
/// inferred), version 3 turned the text price into integer cents (a mapping model).
enum CatalogSQLite {
    enum V2 {
        struct Product: Entity, Equatable {
            var id: Int64
            var name: String
            var price: String
            var stock: Int
            static let indexes: [Index] = [.on("name")]
            static let defaultValues: [String: Value] = ["stock": 0]
            static let previousAttributeNames = ["name": "title"]
        }

        static let model = Model(version: 2, entities: [Product.self])
    }

    enum V3 {
        struct Product: Entity, Equatable {
            var id: Int64
            var name: String
            var priceCents: Int64
            var stock: Int
            static let indexes: [Index] = [.on("name"), .on("priceCents")]
        }

        static let model = Model(version: 3, entities: [Product.self])
    }

    /// What version 3 ships: every version before it, and the mapping model of the step that needs code.
    static let plan = MigrationPlan(
        models: [CatalogV1.model, V2.model],
        mappings: [
            MappingModel(
                from: 2, to: 3,
                [
                    .transform(
                        "Product",
                        [
                            "priceCents": .value { source in
                                let price = Double(try source.string("price") ?? "") ?? 0  // "12.50"
                                return Int64((price * 100).rounded())  // 1250
                            }
                        ])
                ])
        ])
}
