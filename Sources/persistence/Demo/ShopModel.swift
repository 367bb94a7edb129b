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
}

/// An order placed by a customer. Money is kept in integer cents, never in a floating-point type.
struct Order: Entity, Equatable {
    var id: Int64
    var customerID: Int64
    var totalCents: Int64
    var placedAt: Date
    var note: String?
    static let indexes: [Index] = [.on("customerID")]
}

/// The entity types the demo stores, as one versioned model.
enum ShopModel {
    static let current = Model(version: 1, entities: [Customer.self, Order.self])
}
