import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceContentHash
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTool

/// `persistence inspect STORE`: what a store holds, from its own schema.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a store's backend, format, schema version, entities with record counts, and its details.",
        discussion: """
            STORE is sqlite:PATH, lmdb:PATH, a path ending in .sqlite or .lmdb, or postgres://USER@HOST/DATABASE\
            [?schema=NAME]. Opens it read-only: nothing is written and no file is made beside it. An LMDB store is \
            read in a child process (a damaged file ends that process: exit 65). With --json, sizes and counts are \
            numbers: "file size", "map size", "size" in bytes, "pages", "page size", "free pages".
            """)

    @Argument(help: "The store.") var store: String
    @Flag(name: .long, help: "Print JSON for scripts.") var json = false
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var child: InProcessOption

    /// What `--json` prints.
    struct Report: Encodable {
        struct Entity: Encodable {
            var name: String
            var records: Int
            var primaryKey: String
            var attributes: [AttributeDescription]
            var indexes: [Index]
            var relationships: [Relationship]
            /// The entity's full-text indexes; left out of the JSON when it has none.
            var fullTextIndexes: [FullTextIndex]?
            /// The entity's vector attributes; left out of the JSON when it has none.
            var vectorAttributes: [VectorAttribute]?
        }
        var store: String
        var backend: String
        var schemaVersion: Int
        /// The backend's details, a size or count as a number.
        var details: [String: Detail]
        var entities: [Entity]
        /// The details as the text shows them.
        var detailText: [String: String]

        private enum CodingKeys: String, CodingKey {
            case store, backend, schemaVersion, details, entities
        }
    }

    func run() throws {
        let locator = try locator(store)
        if child.isolates(locator) { return try ChildProcess.run(InProcessOption.childArguments, store: store) }
        let report = try reportingErrors(store) {
            let opened = try StoreOpener(passphrase: passphrase.source()).open(locator)
            defer { try? opened.close() }
            let details = try opened.details
            return Report(
                store: locator.description, backend: opened.backend, schemaVersion: opened.schemaVersion,
                details: Detail.values(details),
                entities: try opened.layouts.map { layout in
                    Report.Entity(
                        name: layout.entity.name, records: try opened.count(layout),
                        primaryKey: layout.entity.primaryKey, attributes: layout.entity.attributes,
                        indexes: layout.entity.indexes, relationships: layout.entity.relationships,
                        fullTextIndexes: layout.entity.fullTextIndexes.isEmpty ? nil : layout.entity.fullTextIndexes,
                        vectorAttributes: layout.entity.vectorAttributes.isEmpty
                            ? nil : layout.entity.vectorAttributes)
                },
                detailText: Dictionary(details.map { ($0.label, $0.value) }, uniquingKeysWith: { $1 }))
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Self.text(report))
        }
    }

    static func text(_ report: Report) -> String {
        var lines = ["\(report.store)", "  schema version  \(report.schemaVersion)"]
        for (label, value) in report.detailText.sorted(by: { $0.key < $1.key }) {
            lines.append("  " + label.padding(toLength: 15, withPad: " ", startingAt: 0) + " " + value)
        }
        lines.append("")
        lines.append("\(report.entities.count) entities, \(report.entities.map(\.records).reduce(0, +)) records")
        for entity in report.entities {
            lines.append("")
            lines.append("\(entity.name) — \(entity.records) records, key \(entity.primaryKey)")
            let width = entity.attributes.map(\.name.count).max() ?? 0
            let vectors = Dictionary(
                (entity.vectorAttributes ?? []).map { ($0.attribute, $0.dimensions) }, uniquingKeysWith: { $1 })
            for attribute in entity.attributes {
                lines.append(
                    "  " + attribute.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + attribute.type.rawValue + (attribute.isOptional ? "?" : "")
                        + (vectors[attribute.name].map { " (vector of \($0) dimensions)" } ?? ""))
            }
            for index in entity.indexes {
                lines.append(
                    "  \(index.isUnique ? "unique index" : "index") on \(index.attributes.joined(separator: ", "))")
            }
            for index in entity.fullTextIndexes ?? [] {
                var text =
                    "  full-text index on \(index.attributes.joined(separator: ", ")) (\(index.tokenizer.rawValue)"
                if !index.stopWords.isEmpty { text += ", stop words: " + index.stopWords.joined(separator: " ") }
                lines.append(text + ")")
            }
            for relationship in entity.relationships {
                var text = "  relationship \(relationship.name) → \(relationship.target) (\(relationship.kind.rawValue)"
                if let key = relationship.foreignKey { text += ", key \(key)" }
                if let inverse = relationship.inverse { text += ", inverse \(inverse)" }
                if let rule = relationship.deleteRule { text += ", on delete \(rule.rawValue)" }
                lines.append(text + ")")
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// `persistence hash STORE`: the backend-neutral content digest.
struct Hash: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a digest of the store's content, the same for the same data on every backend.",
        discussion: """
            SHA-256 over every entity, attribute and value in a canonical order (entities and attributes by name, \
            records by primary key); schema versions, indexes, encryption and the file's layout are not content. \
            Two stores with the same digest hold the same data. An LMDB store is read in a child process (a damaged \
            file ends that process: exit 65).
            """)

    @Argument(help: "The store.") var store: String
    @Flag(name: .long, help: "No progress on standard error.") var quiet = false
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var child: InProcessOption

    func run() throws {
        let locator = try locator(store)
        if child.isolates(locator) { return try ChildProcess.run(InProcessOption.childArguments, store: store) }
        let digest = try reportingErrors(store) {
            let opened = try StoreOpener(passphrase: passphrase.source()).open(locator)
            defer { try? opened.close() }
            let total = try opened.recordCount()
            let progress = ProgressReporter("hashed", total: total, quiet: quiet)
            var done = 0
            let digest = try ContentHash.of(opened) { count in
                done = count
                progress.update(count)
            }
            progress.finish(done)
            return digest
        }
        print(digest)
    }
}
