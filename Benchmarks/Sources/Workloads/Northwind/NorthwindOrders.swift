import Foundation

/// One row of Northwind's `Orders` table, as Lighter's PerformanceTestSuite reads it: 14 columns, dates as the text
/// Northwind stores, the nullable ones optional.
public struct NorthwindOrder: Sendable, Hashable {
    public var id: Int64
    public var customerID: String?
    public var employeeID: Int64?
    public var orderDate: String?
    public var requiredDate: String?
    public var shippedDate: String?
    public var shipVia: Int64?
    public var freight: Double?
    public var shipName: String?
    public var shipAddress: String?
    public var shipCity: String?
    public var shipRegion: String?
    public var shipPostalCode: String?
    public var shipCountry: String?
}

/// A record type a Northwind implementation decodes into, convertible to the plain row.
protocol NorthwindRecord: Sendable {
    init(_ order: NorthwindOrder)
    var order: NorthwindOrder { get }
}

extension NorthwindOrder: NorthwindRecord {
    init(_ order: NorthwindOrder) { self = order }
    var order: NorthwindOrder { self }
}

/// N1's data: 15,889 orders (the size of the Northwind `Orders` table Lighter's suite reads) generated in its shape
/// from a fixed seed — customer codes of five letters, ISO dates, shipper 1–3, freight with cents, ship names and
/// addresses of Northwind's lengths, a region on about a third and no shipped date on about 3 % — and how many
/// times each implementation reads the whole table.
public struct NorthwindInput: Sendable {
    /// Lighter's suite: the table read 500 times after 10 warm-up reads.
    public static let fullFetches = 500
    public static let warmUps = 10
    public static let rowCount = 15_889

    public let orders: [NorthwindOrder]
    /// How many timed reads of the whole table.
    public let fetches: Int
    /// How many untimed reads first: the suite's 10, or as many as the timed ones when fewer.
    public var warmUps: Int { min(Self.warmUps, fetches) }
    /// What a read must return: a digest of every row.
    public let digest: NorthwindDigest

    /// `fetches` timed reads (500 in the suite; fewer for a smoke run).
    public init(fetches: Int) {
        var generator = SplitMix64(seed: 0x4E57)
        let cities = ["Reims", "Münster", "Rio de Janeiro", "Lyon", "Charleroi", "Bern", "Genève", "Resende", "Graz"]
        let countries = ["France", "Germany", "Brazil", "Belgium", "Switzerland", "Austria", "USA", "Venezuela"]
        let streets = [
            "rue de l'Abbaye", "Luisenstr.", "Rua do Paço", "Boulevard Tirou", "Kirchgasse", "Berliner Platz",
        ]
        func letters(_ count: Int) -> String {
            String((0..<count).map { _ in Character(UnicodeScalar(UInt8(65 + generator.next(below: 26)))) })
        }
        func date(_ day: Int) -> String {
            let year = 2012 + day / 365
            let month = 1 + (day % 365) / 31 % 12
            let dayOfMonth = 1 + day % 28
            return String(format: "%04d-%02d-%02d", year, month, dayOfMonth)
        }
        orders = (0..<Self.rowCount).map { index in
            let day = index / 20 + generator.next(below: 5)
            let shipped = generator.next(below: 33) == 0 ? nil : date(day + 1 + generator.next(below: 20))
            return NorthwindOrder(
                id: Int64(10_248 + index), customerID: letters(5), employeeID: Int64(1 + generator.next(below: 9)),
                orderDate: date(day), requiredDate: date(day + 28), shippedDate: shipped,
                shipVia: Int64(1 + generator.next(below: 3)), freight: Double(generator.next(below: 100_000)) / 100,
                shipName: letters(6 + generator.next(below: 20)),
                shipAddress: "\(generator.next(below: 300)) \(streets[generator.next(below: streets.count)])",
                shipCity: cities[generator.next(below: cities.count)],
                shipRegion: generator.next(below: 3) == 0 ? letters(2) : nil,
                shipPostalCode: String(10_000 + generator.next(below: 89_999)),
                shipCountry: countries[generator.next(below: countries.count)])
        }
        self.fetches = fetches
        digest = NorthwindDigest(orders)
    }
}

/// What every read of the table must add up to: the number of rows, and sums over every column.
public struct NorthwindDigest: Sendable, Equatable {
    var rows = 0
    var ids: Int64 = 0
    var integers: Int64 = 0
    var freight: Double = 0
    var textBytes = 0
    var nils = 0

    init<S: Sequence<NorthwindOrder>>(_ orders: S) {
        for order in orders {
            rows += 1
            ids &+= order.id
            integers &+= (order.employeeID ?? 0) &+ (order.shipVia ?? 0)
            freight += order.freight ?? 0
            let texts = [
                order.customerID, order.orderDate, order.requiredDate, order.shippedDate, order.shipName,
                order.shipAddress, order.shipCity, order.shipRegion, order.shipPostalCode, order.shipCountry,
            ]
            for text in texts {
                if let text { textBytes += text.utf8.count } else { nils += 1 }
            }
        }
    }
}
