import Foundation
import GRDB
import PersistenceCore
import PersistenceMacros

/// Northwind's `Orders` with `@Entity`: the record code generated.
@Entity
struct OrderEntity: NorthwindColumns {
    var id: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?
    static let entityName = "Orders"
}

/// The same entity as a plain `Codable` struct: what an app writes first.
struct OrderCodable: Entity, NorthwindColumns {
    var id: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?
    static let entityName = "Orders"
}

/// GRDB's `Codable` record of the table (what GRDB's `Codable` row of the suite measures).
struct GRDBOrderCodable: Codable, FetchableRecord, PersistableRecord, NorthwindColumns {
    static let databaseTableName = "Orders"
    var id: Int64
    var customerID: String?
    var employeeID: Int64?
    var orderDate: String?
    var requiredDate: String?
    var shippedDate: String?
    var shipVia: Int64?
    var freight: Double?
    var shipName: String?
    var shipAddress: String?
    var shipCity: String?
    var shipRegion: String?
    var shipPostalCode: String?
    var shipCountry: String?
}

/// GRDB's record decoded by hand: `init(row:)` reading columns by index (GRDB's fastest documented path).
struct GRDBOrderByHand: FetchableRecord, NorthwindRecord {
    var order: NorthwindOrder

    init(_ order: NorthwindOrder) { self.order = order }

    init(row: Row) {
        order = NorthwindOrder(
            id: row[0], customerID: row[1], employeeID: row[2], orderDate: row[3], requiredDate: row[4],
            shippedDate: row[5], shipVia: row[6], freight: row[7], shipName: row[8], shipAddress: row[9],
            shipCity: row[10], shipRegion: row[11], shipPostalCode: row[12], shipCountry: row[13])
    }
}

/// A struct whose stored properties are the table's columns, by the same names (each record kind above): it converts
/// to and from the plain row through its memberwise initializer.
protocol NorthwindColumns: NorthwindRecord {
    var id: Int64 { get }
    var customerID: String? { get }
    var employeeID: Int64? { get }
    var orderDate: String? { get }
    var requiredDate: String? { get }
    var shippedDate: String? { get }
    var shipVia: Int64? { get }
    var freight: Double? { get }
    var shipName: String? { get }
    var shipAddress: String? { get }
    var shipCity: String? { get }
    var shipRegion: String? { get }
    var shipPostalCode: String? { get }
    var shipCountry: String? { get }

    init(
        id: Int64, customerID: String?, employeeID: Int64?, orderDate: String?, requiredDate: String?,
        shippedDate: String?, shipVia: Int64?, freight: Double?, shipName: String?, shipAddress: String?,
        shipCity: String?, shipRegion: String?, shipPostalCode: String?, shipCountry: String?)
}

extension NorthwindColumns {
    init(_ order: NorthwindOrder) {
        self.init(
            id: order.id, customerID: order.customerID, employeeID: order.employeeID, orderDate: order.orderDate,
            requiredDate: order.requiredDate, shippedDate: order.shippedDate, shipVia: order.shipVia,
            freight: order.freight, shipName: order.shipName, shipAddress: order.shipAddress, shipCity: order.shipCity,
            shipRegion: order.shipRegion, shipPostalCode: order.shipPostalCode, shipCountry: order.shipCountry)
    }

    var order: NorthwindOrder {
        NorthwindOrder(
            id: id, customerID: customerID, employeeID: employeeID, orderDate: orderDate, requiredDate: requiredDate,
            shippedDate: shippedDate, shipVia: shipVia, freight: freight, shipName: shipName, shipAddress: shipAddress,
            shipCity: shipCity, shipRegion: shipRegion, shipPostalCode: shipPostalCode, shipCountry: shipCountry)
    }
}
