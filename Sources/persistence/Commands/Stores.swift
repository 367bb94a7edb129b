import ArgumentParser
import Foundation
import PersistenceCommands
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceTool

/// `persistence stores DIR`: every store in a directory.
struct Stores: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the stores in a directory: backend, schema version, entities, records and size.",
        discussion: """
            Every <name>.sqlite and <name>.lmdb file, opened read-only. An encrypted LMDB store shows as encrypted \
            (no passphrase is asked); one that can't be opened says why. Each LMDB store is read in a child process: \
            a damaged file ends that process and is listed as damaged. A directory that can't be read exits 77.
            """)

    @Argument(help: "The directory.") var directory: String
    @Flag(name: .long, help: "Print JSON for scripts.") var json = false
    @OptionGroup var child: InProcessOption
    /// Set by the parent for its child: list only this file of the directory.
    @Option(name: .customLong("only"), help: .hidden) var only: String?

    struct Entry: Codable {
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
        try reportingErrors(directory) { try StoreAccess.checkReadable(url) }
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            FileHandle.standardError.write(Data("\(commandName): \(directory): no such directory\n".utf8))
            throw ExitCode(ToolExit.notFound.rawValue)
        }
        let files: [String]
        if let only {
            files = [only]
        } else {
            do {
                files = try FileManager.default.contentsOfDirectory(atPath: url.path)
            } catch {
                FileHandle.standardError.write(
                    Data("\(commandName): \(directory): the directory can't be read (permission denied)\n".utf8))
                throw ExitCode(ToolExit.permission.rawValue)
            }
        }
        var entries: [Entry] = []
        for file in files.sorted() {
            guard let locator = try? StoreLocator(url.appendingPathComponent(file).path), let path = locator.file
            else { continue }
            var entry = Entry(
                store: locator.description, backend: locator.backend.rawValue,
                bytes: StoredStoreSize.fileSize(path), status: "ok")
            if child.isolates(locator) {
                entry = Self.entryFromChild(directory: url, file: file) ?? entry
            } else {
                Self.read(locator, into: &entry)
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

    /// Opens the store here and notes what it holds, or why it can't be opened.
    private static func read(_ locator: StoreLocator, into entry: inout Entry) {
        do {
            if let file = locator.file { try StoreAccess.checkReadable(file) }
            let store = try StoreOpener.withoutPrompt.open(locator)
            defer { try? store.close() }
            entry.schemaVersion = store.schemaVersion
            entry.entities = store.layouts.count
            entry.records = try store.recordCount()
        } catch let error as PersistenceError where error.code == .wrongPassphrase {
            entry.status = "encrypted"
        } catch let error as PersistenceError {
            entry.status = "can't be opened: \(error.message)"
        } catch {
            entry.status = "can't be opened: \(error)"
        }
    }

    /// The entry of an LMDB store, read by a child process (`stores DIR --only FILE --json`): a damaged file ends
    /// that process, not the listing. `nil` when the child said nothing readable.
    private static func entryFromChild(directory: URL, file: String) -> Entry? {
        let arguments = ["stores", ChildProcess.inProcessFlag, "--only", file, "--json", "--", directory.path]
        guard let result = try? CheckingProcess.run(arguments, passphrase: nil) else { return nil }
        if result.signaled {
            let locator = try? StoreLocator(directory.appendingPathComponent(file).path)
            return Entry(
                store: locator?.description ?? file, backend: "lmdb",
                bytes: StoredStoreSize.fileSize(directory.appendingPathComponent(file)),
                status: "can't be opened: damaged (reading it ended the reading process, "
                    + "\(ChildProcess.signalName(result.status)))")
        }
        return (try? JSONDecoder().decode([Entry].self, from: result.output))?.first
    }
}
