import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceContentHash
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistencePostgres
import PersistenceTool

/// `persistence copy SOURCE DESTINATION`: any backend to any backend, proved by the content hash.
struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a store into a new store of any backend, all or nothing, and prove the copy equal.",
        discussion: """
            Streams every record of SOURCE into DESTINATION in one transaction, with the same schema and version, \
            then opens the copy, verifies it and compares its content hash with the source's. DESTINATION is a new \
            store: sqlite:PATH or lmdb:PATH (a file that must not exist), or postgres://USER@HOST[:PORT]/DATABASE\
            [?schema=NAME] (a schema with no tables yet; its password from --destination-passphrase-file or -env, \
            or PGPASSWORD). A failure or Ctrl-C leaves nothing at DESTINATION. An LMDB destination is encrypted \
            when given a passphrase (--destination-passphrase-file, -env or -prompt), plain otherwise. An LMDB \
            source is read in a child process: a damaged file ends that process, and the copy exits 65.
            """)

    @Argument(help: "The store to copy.") var source: String
    @Argument(help: "The new store: sqlite:PATH, lmdb:PATH or postgres://USER@HOST/DATABASE[?schema=NAME].")
    var destination: String
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var destinationPassphrase: DestinationPassphraseOptions
    @OptionGroup var child: InProcessOption

    func run() throws {
        let from = try locator(source)
        let to = try locator(destination)
        guard from != to else { throw ValidationError("a store can't be copied onto itself") }
        if child.isolates(from) {
            return try ChildProcess.run(InProcessOption.childArguments, store: source, making: to.file)
        }
        let sourceDigest = try reportingErrors(source, making: destination) { () -> String in
            let opened = try StoreOpener(passphrase: passphrase.source()).open(from)
            defer { try? opened.close() }
            let writer = try reportingErrors(destination) {
                try StoreDestination(to, passphrase: destinationPassphrase.source())
                    .writer(layouts: opened.layouts, schemaVersion: opened.schemaVersion)
            }
            let total = try opened.recordCount()
            let progress = ProgressReporter("copied", total: total, quiet: quiet)
            var done = 0
            var hash = ContentHash()
            do {
                for layout in opened.layouts {
                    try hash.begin(layout)
                    try opened.forEachRecord(layout) { record in
                        try hash.add(record)
                        try writer.insert(record)
                        done += 1
                        progress.update(done)
                        try Interruption.check()
                    }
                    hash.end()
                }
                try writer.commit()
            } catch {
                writer.discard()
                throw error
            }
            progress.finish(done)
            return hash.finish()
        }
        // The copy, read back as any reader would: sound, and the same content — or it is removed.
        try reportingErrors(destination) {
            let copy = try StoreOpener(passphrase: destinationPassphrase.source()).open(to)
            var proved = false
            defer {
                try? copy.close()
                if !proved { remove(to) }
            }
            let report = try copy.verify()
            guard report.isSound else {
                throw PersistenceError(.corrupt, "the copy does not verify: \(report.problems.first?.message ?? "")")
            }
            let copyDigest = try ContentHash.of(copy)
            guard copyDigest == sourceDigest else {
                throw PersistenceError(
                    .corrupt, "the copy's content hash \(copyDigest) differs from the source's \(sourceDigest)")
            }
            proved = true
            print("copied \(from) to \(to): \(copyDigest)")
        }
    }

    /// Removes a copy that could not be proved equal, with the files its backend keeps beside it (or its tables).
    func remove(_ store: StoreLocator) {
        guard let file = store.file else {
            guard var builder = try? PostgresBuilder(url: store.url ?? "", model: Model(entities: [])) else { return }
            builder.schema = store.schema ?? "public"
            builder.password = try? SecretSource.serverPassword(destinationPassphrase.source())
            _ = try? builder.deleteStore()
            return
        }
        let companions = store.backend == .sqlite ? ["", "-wal", "-shm"] : ["", "-lock"]
        for suffix in companions { try? FileManager.default.removeItem(atPath: file.path + suffix) }
    }
}
