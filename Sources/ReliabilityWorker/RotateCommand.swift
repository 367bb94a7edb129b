import ArgumentParser
import Foundation
import PersistenceLMDB

/// `rotate`: changes an encrypted LMDB store's passphrase back and forth between two, printing `ack N P` after the
/// N-th change to passphrase P returns, until killed or `--count`.
///
/// The store must exist (made by `commit`). It opens with whichever of the two passphrases works: after a kill,
/// exactly one must.
struct Rotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change an encrypted LMDB store's passphrase between two, printing 'ack N PASSPHRASE' each.")

    @Option(help: "The directory that holds the store.")
    var directory: String

    @Option(help: "The first passphrase.")
    var first: String

    @Option(help: "The second passphrase.")
    var second: String

    @Option(help: "How many changes to make (default: until killed).")
    var count: Int?

    func run() throws {
        var (db, current) = try open()
        var number = 0
        while count.map({ number < $0 }) ?? true {
            let next = current == first ? second : first
            try db.changePassphrase(from: current, to: next)
            number += 1
            WorkerOutput.line("ack \(number) \(next)")
            current = next
            // A fresh open now and then, so kills also land while a store is opened and its key record read.
            if number % 4 == 0 { (db, current) = try open() }
        }
    }

    /// The store, opened with the one passphrase that works, and that passphrase.
    private func open() throws -> (LMDBDatabase, String) {
        do {
            return (try builder(first).create(), first)
        } catch let error as PersistenceError where error.code == .wrongPassphrase {
            return (try builder(second).create(), second)
        }
    }

    private func builder(_ passphrase: String) -> LMDBBuilder {
        var builder = LMDBBuilder(
            databaseName: StoreOptions.databaseName, passphrase: passphrase, entities: [Ledger.self, Counter.self])
        builder.directory = URL(fileURLWithPath: directory, isDirectory: true)
        builder.keyDerivation = .scrypt(logN: 10, blockSize: 8, parallelism: 1)
        return builder
    }
}
