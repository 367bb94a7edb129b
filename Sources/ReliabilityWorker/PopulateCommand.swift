import ArgumentParser
import PersistenceCore

/// `populate`: writes the bit-flip store, `Note` 1...records.
struct Populate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Write the store the bit-flip test damages.")

    @OptionGroup var store: StoreOptions

    @Option(help: "How many records to write.")
    var records: Int64 = 400

    func run() throws {
        try store.open([Note.self], PopulateWork(records: records))
    }
}

struct PopulateWork: StoreWork {
    let records: Int64

    func run<D: Database>(_ db: D) throws {
        try db.write { context in
            for id in 1...records { try context.create(Note.expected(id)) }
        }
        // One more commit that changes no content: LMDB keeps the last two committed trees, one per meta page, and
        // a flip that makes the older meta page look newer must then find the same records — not the empty store
        // of the creating transaction, which is an old snapshot no check could tell from the current one.
        try db.write { context in try context.update(Note.expected(1)) }
    }
}
