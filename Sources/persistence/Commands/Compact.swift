import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceTool

/// `persistence compact STORE`: the store rewritten without its free space, in place.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a store without its free space, in place, all or nothing.",
        discussion: """
            SQLite: VACUUM, then a checkpoint that empties the write-ahead log. LMDB: a compacting copy beside the \
            store, checked key by key against it (and by content hash when the store is plain or its passphrase is \
            given), then renamed over it. Needs free disk space for a copy; refuses a store another process has \
            open (LMDB) or is writing (SQLite). An encrypted LMDB store compacts without its passphrase.
            """)

    @Argument(help: "The store.") var store: String
    @OptionGroup var passphrase: PassphraseOptions

    func run() throws {
        let locator = try locator(store)
        let lines = try reportingErrors(store) {
            try StoreMaintenance.compact(locator, passphrase: passphrase.source())
        }
        for line in lines { print(line) }
    }
}
