import Foundation
import PersistenceCore

/// A customer of the demo shop: a unique email, and a tier stored as its raw `String` value.
struct Customer: Entity, Equatable {
    /// `CaseIterable` lets the schema probe a non-optional `String` enum.
    enum Tier: String, Codable, CaseIterable {
        case free
        case pro
        case enterprise
    }

    var id: Int64
    var name: String
    var email: String
    var tier: Tier
    static let indexes: [Index] = [.unique("email"), .on("tier")]
    static let relationships: [Relationship] = [.toMany("orders", Order.self, inverse: "customer")]
}

/// An order placed by a customer. Money is kept in integer cents, never in a floating-point type.
struct Order: Entity, Equatable {
    var id: Int64
    var customerID: Int64
    var totalCents: Int64
    var placedAt: Date
    var note: String?
    static let indexes: [Index] = [.on("customerID")]
    /// A customer with orders can't be deleted (deny); an order's line items go with it (on LineItem: cascade).
    static let relationships: [Relationship] = [
        .toOne("customer", Customer.self, foreignKey: "customerID", onDelete: .deny),
        .toMany("items", LineItem.self, inverse: "order"),
    ]
}

/// One line of an order: a product and how many, at the price paid.
struct LineItem: Entity, Equatable {
    var id: Int64
    var orderID: Int64
    var product: String
    var quantity: Int
    var unitCents: Int64
    static let relationships: [Relationship] = [
        .toOne("order", Order.self, foreignKey: "orderID", onDelete: .cascade)
    ]
}

/// The entity types the demo stores, as one versioned model (version 2 declared the relationships and line items).
enum ShopModel {
    static let current = Model(version: 2, entities: [Customer.self, Order.self, LineItem.self])
}
