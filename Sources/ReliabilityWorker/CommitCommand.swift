import ArgumentParser
import PersistenceCore

/// `commit`: commits numbered transactions, printing `ack N` after each commit returns, until killed or `--count`.
struct Commit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Commit numbered transactions (a ledger entry and the running counter), printing 'ack N' each.")

    @OptionGroup var store: StoreOptions

    @Option(help: "The first transaction number; it must follow the store's last (default: the store's last + 1).")
    var start: Int64?

    @Option(help: "How many transactions to commit (default: until killed).")
    var count: Int64?

    func run() throws {
        try store.open([Ledger.self, Counter.self], CommitWork(start: start, count: count))
    }
}

struct CommitWork: StoreWork {
    let start: Int64?
    let count: Int64?

    struct OutOfSequence: Error, CustomStringConvertible {
        let start: Int64
        let last: Int64
        var description: String { "--start \(start) does not follow the store's last transaction, \(last)" }
    }

    func run<D: Database>(_ db: D) throws {
        let last = try db.recover(Counter.self, id: Counter.singleID)?.last ?? 0
        let first = start ?? last + 1
        guard first == last + 1 else { throw OutOfSequence(start: first, last: last) }
        var number = first
        while count.map({ number < first + $0 }) ?? true {
            try db.write { context in
                // The counter is read inside the transaction, so a write block run again reads the same state.
                let counter = try context.recover(Counter.self, id: Counter.singleID)
                try context.create(Ledger.expected(number))
                try context.upsert(
                    Counter(
                        id: Counter.singleID, last: number, total: (counter?.total ?? 0) + Ledger.amount(number)))
            }
            WorkerOutput.line("ack \(number)")
            number += 1
        }
    }
}
