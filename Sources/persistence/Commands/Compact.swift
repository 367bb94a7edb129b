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
            open (LMDB) or is writing (SQLite). An encrypted LMDB store compacts without its passphrase. An LMDB \
            store is compacted in a child process (a damaged file ends that process: exit 65, the store untouched).
            """)

    @Argument(help: "The store.") var store: String
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var child: InProcessOption

    func run() throws {
        let locator = try locator(store)
        if child.isolates(locator) {
            return try ChildProcess.run(InProcessOption.childArguments, store: store, making: locator.file)
        }
        let lines = try reportingErrors(store) {
            try StoreMaintenance.compact(locator, passphrase: passphrase.source())
        }
        for line in lines { print(line) }
    }
}
