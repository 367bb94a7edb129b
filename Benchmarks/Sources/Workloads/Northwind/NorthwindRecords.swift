import Foundation
import GRDB
import PersistenceCore
import PersistenceMacros

/// Northwind's `Orders` with `@Entity`: the record code generated.
@Entity
struct OrderEntity: NorthwindRecord {
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

    init(_ order: NorthwindOrder) {
        (id, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia) =
            (
                order.id, order.customerID, order.employeeID, order.orderDate, order.requiredDate, order.shippedDate,
                order.shipVia
            )
        (freight, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry) =
            (
                order.freight, order.shipName, order.shipAddress, order.shipCity, order.shipRegion,
                order.shipPostalCode, order.shipCountry
            )
    }

    var order: NorthwindOrder {
        NorthwindOrder(
            id: id, customerID: customerID, employeeID: employeeID, orderDate: orderDate, requiredDate: requiredDate,
            shippedDate: shippedDate, shipVia: shipVia, freight: freight, shipName: shipName, shipAddress: shipAddress,
            shipCity: shipCity, shipRegion: shipRegion, shipPostalCode: shipPostalCode, shipCountry: shipCountry)
    }
}

/// The same entity as a plain `Codable` struct: what an app writes first.
struct OrderCodable: Entity, NorthwindRecord {
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

    init(_ order: NorthwindOrder) {
        (id, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia) =
            (
                order.id, order.customerID, order.employeeID, order.orderDate, order.requiredDate, order.shippedDate,
                order.shipVia
            )
        (freight, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry) =
            (
                order.freight, order.shipName, order.shipAddress, order.shipCity, order.shipRegion,
                order.shipPostalCode, order.shipCountry
            )
    }

    var order: NorthwindOrder {
        NorthwindOrder(
            id: id, customerID: customerID, employeeID: employeeID, orderDate: orderDate, requiredDate: requiredDate,
            shippedDate: shippedDate, shipVia: shipVia, freight: freight, shipName: shipName, shipAddress: shipAddress,
            shipCity: shipCity, shipRegion: shipRegion, shipPostalCode: shipPostalCode, shipCountry: shipCountry)
    }
}

/// GRDB's `Codable` record of the table (what GRDB's `Codable` row of the suite measures).
struct GRDBOrderCodable: Codable, FetchableRecord, PersistableRecord, NorthwindRecord {
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

    init(_ order: NorthwindOrder) {
        (id, customerID, employeeID, orderDate, requiredDate, shippedDate, shipVia) =
            (
                order.id, order.customerID, order.employeeID, order.orderDate, order.requiredDate, order.shippedDate,
                order.shipVia
            )
        (freight, shipName, shipAddress, shipCity, shipRegion, shipPostalCode, shipCountry) =
            (
                order.freight, order.shipName, order.shipAddress, order.shipCity, order.shipRegion,
                order.shipPostalCode, order.shipCountry
            )
    }

    var order: NorthwindOrder {
        NorthwindOrder(
            id: id, customerID: customerID, employeeID: employeeID, orderDate: orderDate, requiredDate: requiredDate,
            shippedDate: shippedDate, shipVia: shipVia, freight: freight, shipName: shipName, shipAddress: shipAddress,
            shipCity: shipCity, shipRegion: shipRegion, shipPostalCode: shipPostalCode, shipCountry: shipCountry)
    }
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
