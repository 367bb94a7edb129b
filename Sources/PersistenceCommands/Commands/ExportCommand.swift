import ArgumentParser
import Foundation
import PersistenceCore

/// `export STORE`: the app's entities, read as its own types, as JSON Lines or CSV.
struct ExportCommand<App: StoreCommands>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "export",
            abstract: "Write the store's records, read as the app's entity types, as JSON Lines or CSV.",
            discussion: """
                Every record is read through the app's own type and written back from it, so the export holds what \
                the app sees; a record the app can't read stops the export with its entity (nothing is kept). The \
                format is the `persistence export` format: `persistence import` makes a store of any backend from \
                it. A store that needs a migration is refused (export never migrates). An LMDB store is read in a \
                child process: a file damaged enough to crash the storage engine ends that process, and the export \
                exits 65 and removes its file.
                """)
    }

    @OptionGroup var arguments: StoreArguments
    @Option(name: .long, help: "Export only these entities (repeatable); CSV takes exactly one.")
    var entity: [String] = []
    @Option(name: .long, help: "jsonl or csv.") var format: ExportFileFormat = .jsonl
    @Option(name: .shortAndLong, help: "Write to this new file instead of standard output.") var output: String?
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false
    @OptionGroup var child: InProcessOption

    func run() throws {
        if !child.inProcess, try arguments.address().backend == StoreLocator.Backend.lmdb.rawValue {
            // The child is this executable with this command line, whatever path of subcommands led here.
            return try ChildProcess.run(
                Array(CommandLine.arguments.dropFirst()) + [ChildProcess.inProcessFlag], store: arguments.store,
                making: output.map { URL(fileURLWithPath: $0) })
        }
        try reportingErrors(arguments.store) {
            let builder = try App.currentStoreBuilder(arguments)
            let model = builder.model
            let types = try entity.isEmpty ? model.entities : entity.map { try Self.type(named: $0, in: model) }
            let layouts = try types.map { try SchemaCache.layout(for: $0) }
            let database = try builder.create()
            defer { try? database.close() }
            var total = 0
            for type in types { total += try database.count(type) }
            let header = ExportHeader(
                backend: try arguments.address().backend, schemaVersion: model.version, schema: layouts.map(\.entity))
            try ExportSink.exporting(
                format, to: output.map { URL(fileURLWithPath: $0) }, header: header, layouts: layouts,
                available: model.entities.map { $0.entityName }, total: total, quiet: quiet
            ) { sink in
                for type in types { try Self.export(type, from: database, to: sink) }
            }
        }
    }

    /// Writes every record of `type`, in primary-key order, through the app's encoding.
    private static func export<E: Entity>(_ type: E.Type, from database: some Database, to sink: ExportSink) throws {
        let layout = try SchemaCache.layout(for: E.self)
        let writer = RecordWriter(layout: layout)
        let key = layout.names[layout.primaryKeyIndex]
        try database.forEach(E.self, query: Query(sortedBy: [.ascending(key)])) { entity in
            try sink.write(try Record(layout: layout, values: writer.encode(entity)))
        }
    }

    private static func type(named name: String, in model: Model) throws -> any Entity.Type {
        guard let type = model.entities.first(where: { $0.entityName == name }) else {
            throw PersistenceError(
                .unknownEntity,
                "the app's model has no entity '\(name)' (it has "
                    + model.entities.map { $0.entityName }.joined(separator: ", ") + ")")
        }
        return type
    }
}
