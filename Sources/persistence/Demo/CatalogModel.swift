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
