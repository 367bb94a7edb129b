import ArgumentParser
import PersistenceCore

/// `check`: opens the store and prints one JSON line: the highest complete transaction, whether every transaction
/// is all-or-nothing, and the error code when opening or reading fails.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store written by 'commit' and print a JSON summary.")

    @OptionGroup var store: StoreOptions

    func run() throws {
        let summary: CheckSummary
        do {
            summary = try store.open([Ledger.self, Counter.self], CheckWork())
        } catch {
            summary = CheckSummary(
                highest: -1, ledgers: 0, consistent: false, problems: [], errorCode: errorCode(error))
        }
        try WorkerOutput.json(summary)
    }
}

/// What `check` prints.
struct CheckSummary: Codable {
    /// The counter's last transaction: every transaction up to it must be in the store, none after it.
    var highest: Int64
    /// How many ledger entries the store holds.
    var ledgers: Int
    /// Whether the ledger is exactly transactions 1...highest, each as written, and the counter's total matches.
    var consistent: Bool
    /// What is inconsistent, by transaction number (never more than a few).
    var problems: [String]
    /// The code of the error that stopped the check, if one did.
    var errorCode: String?
}

struct CheckWork: StoreWork {
    func run<D: Database>(_ db: D) throws -> CheckSummary {
        try db.read { context in
            let counter = try context.recover(Counter.self, id: Counter.singleID)
            let highest = counter?.last ?? 0
            let ledgers = try context.recover(Ledger.self)
            var problems: [String] = []
            func note(_ problem: String) { if problems.count < 10 { problems.append(problem) } }
            if ledgers.count != Int(highest) { note("\(ledgers.count) ledger entries for \(highest) transactions") }
            var total: Int64 = 0
            for (offset, ledger) in ledgers.enumerated() {
                if ledger.id != Int64(offset) + 1 { note("entry \(offset + 1) is missing or out of order") }
                if ledger != Ledger.expected(ledger.id) { note("entry \(ledger.id) differs from what was written") }
                total += ledger.amount
            }
            if total != (counter?.total ?? 0) { note("the counter's total disagrees with the ledger") }
            // The index must agree with the records: each bucket's lookup finds exactly its entries.
            for bucket in 0..<Ledger.buckets {
                let found = try context.recover(Ledger.self, key: "bucket", value: bucket).map(\.id).sorted()
                let expected = ledgers.map(\.id).filter { $0 % Ledger.buckets == bucket }
                if found != expected { note("the index of bucket \(bucket) disagrees with the records") }
            }
            return CheckSummary(
                highest: highest, ledgers: ledgers.count, consistent: problems.isEmpty, problems: problems,
                errorCode: nil)
        }
    }
}
