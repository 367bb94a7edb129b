import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTool

/// `persistence export STORE`: records as JSON Lines or CSV, streamed.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a store's records as JSON Lines (every entity, with its schema) or CSV (one entity).",
        discussion: """
            JSON Lines: a header line with the schema, then {"entity":…,"record":{…}} per record, in primary-key \
            order — what `persistence import` reads back exactly. CSV: a header row of attribute names, a row per \
            record; nil is an empty field, an empty string a quoted "", a field with a quote, comma or line break is \
            quoted (RFC 4180). Memory does not grow with the store. An LMDB store is read in a child process: a \
            damaged file ends that process, and the export exits 65 and removes its -o file.
            """)

    @Argument(help: "The store.") var store: String
    @Option(name: .long, help: "Export only these entities (repeatable); CSV takes exactly one.")
    var entity: [String] = []
    @Option(name: .long, help: "jsonl or csv.") var format: ExportFileFormat = .jsonl
    @Option(name: .shortAndLong, help: "Write to this new file instead of standard output.") var output: String?
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var child: InProcessOption

    func run() throws {
        let locator = try locator(store)
        if child.isolates(locator) {
            return try ChildProcess.run(
                InProcessOption.childArguments, store: store, making: output.map { URL(fileURLWithPath: $0) })
        }
        try reportingErrors(store, making: output) {
            let opened = try StoreOpener(passphrase: passphrase.source()).open(locator)
            defer { try? opened.close() }
            let layouts = try entity.isEmpty ? opened.layouts : entity.map { try opened.layout(named: $0) }
            let header = ExportHeader(
                backend: opened.backend, schemaVersion: opened.schemaVersion, schema: layouts.map(\.entity))
            try ExportSink.exporting(
                format, to: output.map { URL(fileURLWithPath: $0) }, header: header, layouts: layouts,
                available: opened.layouts.map(\.entity.name), total: try opened.recordCount(of: layouts), quiet: quiet
            ) { sink in
                for layout in layouts { try opened.forEachRecord(layout) { try sink.write($0) } }
            }
        }
    }
}

/// `persistence import FILE STORE`: a JSON Lines export into a new store, all or nothing.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make a new store from a JSON Lines export, in one transaction.",
        discussion: """
            The store is created with the export's schema and version: sqlite:PATH or lmdb:PATH (a file that must \
            not exist; LMDB encrypted when given --destination-passphrase-file, -env or -prompt), or \
            postgres://USER@HOST[:PORT]/DATABASE[?schema=NAME] (a schema with no tables yet; its password from \
            --destination-passphrase-file or -env, or PGPASSWORD). A line that isn't a record of that schema \
            (unknown entity or attribute, a missing or mistyped value, a duplicate key) stops the import with its \
            line number and leaves nothing at STORE.
            """)

    @Argument(help: "The export (JSON Lines) to read.") var file: String
    @Argument(help: "The new store: sqlite:PATH, lmdb:PATH or postgres://USER@HOST/DATABASE[?schema=NAME].")
    var store: String
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false
    @OptionGroup var destination: DestinationPassphraseOptions

    func run() throws {
        let target = try locator(store)
        try reportingErrors(store) {
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw PersistenceError(.notFound, "no export at \(url.path)")
            }
            var lines = try LineReader(file: url)
            guard let first = lines.next(),
                let header = try? JSONDecoder().decode(ExportHeader.self, from: Data(first)),
                header.format == "persistence-export"
            else { throw PersistenceError(.invalidValue, "\(file) line 1 is not the header of a persistence export") }
            guard header.version == 1 else {
                throw PersistenceError(
                    .unsupportedFormatVersion, "\(file) is export format \(header.version); this build reads 1")
            }
            let layouts = header.schema.map { RecordLayout($0) }
            let byName = Dictionary(layouts.map { ($0.entity.name, $0) }, uniquingKeysWith: { first, _ in first })
            let writer = try StoreDestination(target, passphrase: destination.source())
                .writer(layouts: layouts, schemaVersion: header.schemaVersion)
            let progress = ProgressReporter("imported", total: nil, quiet: quiet)
            var number = 1
            let decoder = JSONDecoder()
            var done = 0
            do {
                for line in lines {
                    number += 1
                    if line.isEmpty { continue }
                    do {
                        try writer.insert(try JSONLines.record(line, layouts: byName, decoder: decoder))
                    } catch let error as PersistenceError {
                        throw PersistenceError(error.code, "\(file) line \(number): \(error.message)")
                    }
                    done += 1
                    progress.update(done)
                    try Interruption.check()
                }
                try writer.commit()
            } catch {
                writer.discard()
                throw error
            }
            progress.finish(done)
        }
    }
}
