import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
import PersistenceTool

/// `persistence stores DIR`: every store in a directory.
struct Stores: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the stores in a directory: backend, schema version, entities, records and size.",
        discussion: """
            Every <name>.sqlite and <name>.lmdb file, opened read-only. An encrypted LMDB store shows as encrypted \
            (no passphrase is asked); one that can't be opened says why.
            """)

    @Argument(help: "The directory.") var directory: String
    @Flag(name: .long, help: "Print JSON for scripts.") var json = false

    struct Entry: Encodable {
        var store: String
        var backend: String
        var bytes: Int64
        var schemaVersion: Int?
        var entities: Int?
        var records: Int?
        var status: String
    }

    func run() throws {
        let url = URL(fileURLWithPath: directory).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            FileHandle.standardError.write(Data("persistence: \(directory): no such directory\n".utf8))
            throw ExitCode(ToolExit.notFound.rawValue)
        }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        var entries: [Entry] = []
        for file in files.sorted() {
            guard let locator = try? StoreLocator(url.appendingPathComponent(file).path), let path = locator.file
            else { continue }
            var entry = Entry(
                store: locator.description, backend: locator.backend.rawValue,
                bytes: StoredStoreSize.fileSize(path), status: "ok")
            do {
                let store = try StoreOpener.withoutPrompt.open(locator)
                defer { try? store.close() }
                entry.schemaVersion = store.schemaVersion
                entry.entities = store.layouts.count
                entry.records = try store.recordCount()
            } catch let error as PersistenceError where error.code == .wrongPassphrase {
                entry.status = "encrypted"
            } catch let error as PersistenceError {
                entry.status = "can't be opened: \(error.message)"
            }
            entries.append(entry)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(entries), as: UTF8.self))
            return
        }
        guard !entries.isEmpty else { return print("no stores in \(url.path)") }
        for entry in entries {
            var text = entry.store + "  " + StoredStoreSize.bytes(entry.bytes)
            if let version = entry.schemaVersion, let entities = entry.entities, let records = entry.records {
                text += "  version \(version), \(entities) entities, \(records) records"
            }
            if entry.status != "ok" { text += "  " + entry.status }
            print(text)
        }
    }
}
