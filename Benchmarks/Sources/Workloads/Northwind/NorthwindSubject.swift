public import Foundation
import GRDB
import PersistenceCore
import PersistenceSQLite
import RawSQLite

/// N1, Lighter's PerformanceTestSuite: read Northwind's whole `Orders` table (14 columns, 15,889 rows) into
/// structs, 10 times to warm up, then `fetches` times (500 in the suite), timed together.
///
/// Raw is the C API: one prepared `SELECT`, columns read by index with their `NULL`s checked, into
/// ``NorthwindOrder``. Ours reads `@Entity` and plain `Codable` entities of the same table; GRDB a `Codable` record
/// and one decoded by hand (`init(row:)` by column index). Every store is filled and reopened before the timed reads;
/// the last read is checked against the data.
public enum NorthwindSubject: String, CaseIterable, Sendable {
    case raw = "raw"
    case oursEntity = "ours-@Entity"
    case oursCodable = "ours-Codable"
    case grdbByHand = "grdb-by-hand"
    case grdbCodable = "grdb-Codable"

    /// The workload id of the rows.
    public static let workload = "N1"

    static let columns = [
        "id", "customerID", "employeeID", "orderDate", "requiredDate", "shippedDate", "shipVia", "freight", "shipName",
        "shipAddress", "shipCity", "shipRegion", "shipPostalCode", "shipCountry",
    ]

    /// Fills a store in `directory` (empty), reopens it, and times the reads.
    public func run(_ input: NorthwindInput, directory: URL) throws -> Double {
        let verify = Verifier(workload: Self.workload, implementation: rawValue)
        let (last, seconds): ([NorthwindOrder], Double)
        switch self {
        case .raw: (last, seconds) = try RawNorthwindStore(directory: directory, filledWith: input.orders).read(input)
        case .oursEntity: (last, seconds) = try Self.ours(OrderEntity.self, input, directory)
        case .oursCodable: (last, seconds) = try Self.ours(OrderCodable.self, input, directory)
        case .grdbByHand: (last, seconds) = try Self.grdb(GRDBOrderByHand.self, input, directory)
        case .grdbCodable: (last, seconds) = try Self.grdb(GRDBOrderCodable.self, input, directory)
        }
        try verify.expect(NorthwindDigest(last) == input.digest, "the last read's rows")
        return seconds
    }

    /// Reads `input.fetches` times after the warm-up; returns the last read and the seconds of the timed ones.
    static func timedReads<Record: NorthwindRecord>(_ input: NorthwindInput, _ read: () throws -> [Record]) throws
        -> ([NorthwindOrder], Double)
    {
        for _ in 0..<input.warmUps { _ = try read() }
        var last: [Record] = []
        let seconds = try Stopwatch.time {
            for _ in 0..<input.fetches { last = try read() }
        }.seconds
        return (last.map(\.order), seconds)
    }

    private static func ours<Record: Entity & NorthwindRecord>(
        _ type: Record.Type, _ input: NorthwindInput, _ directory: URL
    ) throws -> ([NorthwindOrder], Double) {
        func open() throws -> SQLiteDatabase {
            var builder = SQLiteBuilder(databaseName: "ours", entities: [Record.self])
            builder.directory = directory
            return try builder.create()
        }
        try open().create(input.orders.map(Record.init))
        let db = try open()
        defer { try? db.close() }
        return try timedReads(input) { try db.read { context in try context.recover(Record.self, query: Query()) } }
    }

    private static func grdb<Record: FetchableRecord & NorthwindRecord>(
        _ type: Record.Type, _ input: NorthwindInput, _ directory: URL
    ) throws -> ([NorthwindOrder], Double) {
        let path = directory.appendingPathComponent("grdb.sqlite").path
        do {
            let pool = try DatabasePool(path: path)
            try pool.write { db in
                try db.create(table: "Orders") { table in
                    table.primaryKey("id", .integer)
                    for column in columns.dropFirst() {
                        let type: GRDB.Database.ColumnType =
                            ["employeeID", "shipVia"].contains(column)
                            ? .integer : column == "freight" ? .double : .text
                        table.column(column, type)
                    }
                }
                for order in input.orders { try GRDBOrderCodable(order).insert(db) }
            }
        }
        let pool = try DatabasePool(path: path)
        let sql = "SELECT \(columns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \"Orders\" ORDER BY \"id\""
        return try timedReads(input) { try pool.read { db in try Record.fetchAll(db, sql: sql) } }
    }
}

/// The raw C API's store of N1: the table as ours creates it, one prepared `SELECT` read by column index (the
/// connection owns and finalizes its statements).
final class RawNorthwindStore {
    private let connection: RawSQLiteConnection
    private let select: OpaquePointer

    init(directory: URL, filledWith orders: [NorthwindOrder]) throws {
        let path = directory.appendingPathComponent("raw.sqlite").path
        do {
            let filling = try RawSQLiteConnection(path: path)
            try filling.execute("PRAGMA journal_mode = WAL")
            let columns = NorthwindSubject.columns.dropFirst().map { column in
                let type =
                    ["employeeID", "shipVia"].contains(column) ? "INTEGER" : column == "freight" ? "REAL" : "TEXT"
                return "\"\(column)\" \(type)"
            }
            try filling.execute(
                "CREATE TABLE \"Orders\" (\"id\" INTEGER NOT NULL PRIMARY KEY, \(columns.joined(separator: ", ")))")
            let placeholders = Array(repeating: "?", count: NorthwindSubject.columns.count).joined(separator: ", ")
            let insert = try filling.prepare("INSERT INTO \"Orders\" VALUES (\(placeholders))")
            try filling.execute("BEGIN IMMEDIATE")
            for order in orders {
                try Self.bind(order, insert, filling)
                _ = try filling.step(insert)
                sqlite3_reset(insert)
            }
            try filling.execute("COMMIT")
        }
        connection = try RawSQLiteConnection(path: path)
        select = try connection.prepare(
            "SELECT \(NorthwindSubject.columns.map { "\"\($0)\"" }.joined(separator: ", ")) FROM \"Orders\" ORDER BY \"id\""
        )
    }

    func read(_ input: NorthwindInput) throws -> ([NorthwindOrder], Double) {
        try NorthwindSubject.timedReads(input) {
            try connection.execute("BEGIN DEFERRED")
            defer { sqlite3_reset(select) }
            var orders: [NorthwindOrder] = []
            while try connection.step(select) { orders.append(Self.order(select)) }
            try connection.execute("COMMIT")
            return orders
        }
    }

    private static func bind(_ order: NorthwindOrder, _ statement: OpaquePointer, _ connection: RawSQLiteConnection)
        throws
    {
        try connection.bind(order.id, at: 1, statement)
        let texts: [(Int32, String?)] = [
            (2, order.customerID), (4, order.orderDate), (5, order.requiredDate), (6, order.shippedDate),
            (9, order.shipName), (10, order.shipAddress), (11, order.shipCity), (12, order.shipRegion),
            (13, order.shipPostalCode), (14, order.shipCountry),
        ]
        for (index, text) in texts {
            if let text { try connection.bind(text, at: index, statement) } else { sqlite3_bind_null(statement, index) }
        }
        if let employee = order.employeeID { try connection.bind(employee, at: 3, statement) }
        if let shipVia = order.shipVia { try connection.bind(shipVia, at: 7, statement) }
        if let freight = order.freight { try connection.bind(freight, at: 8, statement) }
    }

    @inline(__always)
    private static func order(_ statement: OpaquePointer) -> NorthwindOrder {
        @inline(__always) func text(_ index: Int32) -> String? {
            sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : RawSQLiteConnection.text(statement, index)
        }
        @inline(__always) func integer(_ index: Int32) -> Int64? {
            sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, index)
        }
        let freight: Double? =
            sqlite3_column_type(statement, 7) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 7)
        return NorthwindOrder(
            id: sqlite3_column_int64(statement, 0), customerID: text(1), employeeID: integer(2), orderDate: text(3),
            requiredDate: text(4), shippedDate: text(5), shipVia: integer(6), freight: freight, shipName: text(8),
            shipAddress: text(9), shipCity: text(10), shipRegion: text(11), shipPostalCode: text(12),
            shipCountry: text(13))
    }
}
