import PersistenceCore

/// One numbered transaction's ledger entry; every field follows from its number, so a check knows what it must be.
struct Ledger: Entity, Equatable {
    var id: Int64
    var amount: Int64
    var bucket: Int64
    var memo: String
    static let indexes: [Index] = [.on("bucket")]

    static let buckets: Int64 = 7

    /// The entry transaction `number` writes. Memos vary in length, and every 10th is long enough for LMDB's
    /// overflow pages, so the kills land in page splits, large-value writes and map growth too.
    static func expected(_ number: Int64) -> Ledger {
        let length = number % 10 == 0 ? 3000 : Int(number % 300)
        return Ledger(
            id: number, amount: amount(number), bucket: number % buckets,
            memo: "entry \(number) " + String(repeating: "m", count: length))
    }

    static func amount(_ number: Int64) -> Int64 { number * 7 % 1000 + 1 }
}

/// The running total each transaction updates along with its ledger entry: a transaction applied in part shows as
/// a counter that disagrees with the ledger.
struct Counter: Entity, Equatable {
    var id: Int64
    var last: Int64
    var total: Int64

    static let singleID: Int64 = 1
}
