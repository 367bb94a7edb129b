import Foundation
import PersistenceCore
import PersistenceLMDB
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// An app's entities, stored by the app; the tool then works on the stores with no Swift types of its own.
struct Gadget: Entity, Equatable {
    var id: Int64
    var name: String
    var price: Double
    var added: Date
    var serial: UUID
    var photo: Data?
    var note: String?
    var active: Bool
    static let indexes: [Index] = [.unique("name"), .on("price")]
}

struct Tag: Entity, Equatable {
    var id: String
    var label: String
}

/// The `persistence` binary run as a user runs it: each command, exit statuses, JSON output, round trips between
/// backends proved by `hash`, damaged and encrypted stores.
@Suite(.serialized)
struct StoreToolTests {
    static let gadgets: [Gadget] = (1...40).map(gadget)

    static func gadget(_ index: Int) -> Gadget {
        let price: Double = index == 3 ? -0.0 : Double(index) / 3
        let photo: Data? = index.isMultiple(of: 4) ? Data((0..<index).map { UInt8($0) }) : nil
        var note: String?
        if index.isMultiple(of: 5) { note = "line\nbreak, \"quote\" \u{0} nul" } else if index == 6 { note = "" }
        return Gadget(
            id: Int64(index * 7 - 100), name: "gadget \(index) ✓", price: price,
            added: Date(timeIntervalSinceReferenceDate: Double(index) * 1_000.25), serial: UUID(), photo: photo,
            note: note, active: index.isMultiple(of: 2))
    }
    static let tags = ["b", "a", "Zürich", "ä", ""].map { Tag(id: $0, label: "tag " + $0) }
    static let passphrase = "correct horse battery staple"

    /// The app's SQLite store, with the sample data.
    func appStore(in directory: URL) throws -> URL {
        var builder = SQLiteBuilder(databaseName: "Shop", entities: [Gadget.self, Tag.self])
        builder.directory = directory
        let db = try builder.create()
        try db.create(Self.gadgets)
        try db.create(Self.tags)
        try db.close()
        return directory.appendingPathComponent("Shop.sqlite")
    }

    @Test func inspectsHashesAndCopiesAcrossBackendsWithEqualHashes() throws {
        try withTemporaryDirectory { directory in
            let sqlite = try appStore(in: directory)
            let inspect = try Tool.run(["inspect", "sqlite:" + sqlite.path, "--json"])
            #expect(inspect.status == 0, "\(inspect.errors)")
            let report = try JSONSerialization.jsonObject(with: Data(inspect.output.utf8)) as? [String: Any]
            let entities = report?["entities"] as? [[String: Any]] ?? []
            #expect(entities.compactMap { $0["name"] as? String } == ["Gadget", "Tag"])
            #expect(entities.compactMap { $0["records"] as? Int } == [40, 5])
            #expect(report?["schemaVersion"] as? Int == 1)

            let hash = try Tool.run(["hash", sqlite.path]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(hash.hasPrefix("sha256:") && hash.count == 71)

            // SQLite → encrypted LMDB → plain LMDB → SQLite, each proved by the copy itself and by `hash`.
            let environment = ["TOOL_TEST_PASSPHRASE": Self.passphrase]
            let encrypted = directory.appendingPathComponent("Sealed.lmdb")
            let copy1 = try Tool.run(
                [
                    "copy", sqlite.path, "lmdb:" + encrypted.path, "--destination-passphrase-env",
                    "TOOL_TEST_PASSPHRASE",
                ],
                environment: environment)
            #expect(copy1.status == 0, "\(copy1.errors)")
            #expect(copy1.output.contains(hash))
            let sealedHash = try Tool.run(
                ["hash", encrypted.path, "--passphrase-env", "TOOL_TEST_PASSPHRASE"], environment: environment)
            #expect(sealedHash.output.contains(hash), "\(sealedHash.errors)")
            let plain = directory.appendingPathComponent("Plain.lmdb")
            let copy2 = try Tool.run(
                ["copy", encrypted.path, plain.path, "--passphrase-env", "TOOL_TEST_PASSPHRASE"],
                environment: environment)
            #expect(copy2.status == 0, "\(copy2.errors)")
            let back = directory.appendingPathComponent("Back.sqlite")
            let copy3 = try Tool.run(["copy", plain.path, back.path])
            #expect(copy3.status == 0, "\(copy3.errors)")
            #expect(try Tool.run(["hash", back.path]).output.contains(hash))

            // The app opens every copy with its own types and finds its data.
            var lmdb = LMDBBuilder(
                databaseName: "Sealed", passphrase: Self.passphrase, entities: [Gadget.self, Tag.self])
            lmdb.directory = directory
            let reopened = try lmdb.create()
            #expect(try reopened.recover(Gadget.self, sortedBy: [.ascending("id")]) == Self.gadgets)
            #expect(try reopened.count(Tag.self) == 5)
            try reopened.close()
            var sqliteBack = SQLiteBuilder(databaseName: "Back", entities: [Gadget.self, Tag.self])
            sqliteBack.directory = directory
            let backDB = try sqliteBack.create()
            #expect(try backDB.recover(Gadget.self, sortedBy: [.ascending("id")]) == Self.gadgets)
            try backDB.close()

            // Nothing a copy leaves may reveal the passphrase.
            for run in [copy1, copy2, sealedHash] { #expect(!(run.output + run.errors).contains(Self.passphrase)) }
        }
    }

    @Test func exportsAndImportsJSONLinesExactlyAndRefusesBadLinesWithTheirNumber() throws {
        try withTemporaryDirectory { directory in
            let sqlite = try appStore(in: directory)
            let dump = directory.appendingPathComponent("dump.jsonl")
            let export = try Tool.run(["export", sqlite.path, "--output", dump.path])
            #expect(export.status == 0, "\(export.errors)")
            let lines = try String(contentsOf: dump, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 1 + 40 + 5)
            #expect(lines[0].contains("\"format\":\"persistence-export\""))

            let imported = directory.appendingPathComponent("Imported.lmdb")
            let run = try Tool.run(["import", dump.path, "lmdb:" + imported.path])
            #expect(run.status == 0, "\(run.errors)")
            let hashes = try [sqlite.path, imported.path].map { try Tool.run(["hash", $0]).output }
            #expect(hashes[0] == hashes[1] && !hashes[0].isEmpty)

            // A duplicate key on line 4: nothing is made, and the message says where.
            var bad = lines.map(String.init)
            bad[3] = bad[2]
            let badDump = directory.appendingPathComponent("bad.jsonl")
            try (bad.joined(separator: "\n") + "\n").write(to: badDump, atomically: true, encoding: .utf8)
            let refused = directory.appendingPathComponent("Refused.sqlite")
            let failed = try Tool.run(["import", badDump.path, refused.path])
            #expect(failed.status == 65, "\(failed.errors)")
            #expect(failed.errors.contains("line 4"))
            #expect(!FileManager.default.fileExists(atPath: refused.path))
            // An unknown attribute, a mistyped value.
            for (line, replacement) in [
                (5, #"{"entity":"Gadget","record":{"id":1,"nope":2}}"#),
                (6, #"{"entity":"Gadget","record":{"id":"x"}}"#),
            ] {
                var broken = lines.map(String.init)
                broken[line - 1] = replacement
                try (broken.joined(separator: "\n") + "\n").write(to: badDump, atomically: true, encoding: .utf8)
                let result = try Tool.run(["import", badDump.path, refused.path])
                #expect(result.status != 0 && result.errors.contains("line \(line)"), "\(result.errors)")
                #expect(!FileManager.default.fileExists(atPath: refused.path))
            }

            let csv = try Tool.run(["export", sqlite.path, "--entity", "Tag", "--format", "csv"])
            #expect(csv.status == 0, "\(csv.errors)")
            #expect(csv.output.hasPrefix("id,label\n"))
            #expect(csv.output.contains("\"\",tag \n"))
            let noEntity = try Tool.run(["export", sqlite.path, "--format", "csv"])
            #expect(noEntity.status == 64)
        }
    }

    @Test func verifiesInAChildProcessAndGivesEachFailureItsStatus() throws {
        try withTemporaryDirectory { directory in
            let sqlite = try appStore(in: directory)
            let sound = try Tool.run(["verify", sqlite.path])
            #expect(sound.status == 0, "\(sound.errors)")
            #expect(sound.output.contains("sound"))

            let environment = ["TOOL_TEST_PASSPHRASE": Self.passphrase, "WRONG": "not it"]
            let encrypted = directory.appendingPathComponent("Sealed.lmdb")
            _ = try Tool.run(
                ["copy", sqlite.path, encrypted.path, "--destination-passphrase-env", "TOOL_TEST_PASSPHRASE"],
                environment: environment)
            let good = try Tool.run(
                ["verify", encrypted.path, "--passphrase-env", "TOOL_TEST_PASSPHRASE", "--json"],
                environment: environment)
            #expect(good.status == 0, "\(good.errors)")
            #expect(good.output.contains("\"recordsChecked\""))
            let wrong = try Tool.run(
                ["inspect", encrypted.path, "--passphrase-env", "WRONG"], environment: environment)
            #expect(wrong.status == 77, "\(wrong.errors)")
            #expect(!wrong.errors.contains("not it"))
            let missing = try Tool.run(["inspect", directory.appendingPathComponent("None.sqlite").path])
            #expect(missing.status == 66)
            let usage = try Tool.run(["inspect", directory.appendingPathComponent("file.txt").path])
            #expect(usage.status == 64)

            // Damage in the middle of the encrypted file: the tool reports, it doesn't crash.
            var bytes = try Data(contentsOf: encrypted)
            for offset in stride(from: 4096 * 2 + 100, to: min(bytes.count, 4096 * 6), by: 512) {
                bytes[offset] ^= 0x5A
            }
            try bytes.write(to: encrypted)
            let damaged = try Tool.run(
                ["verify", encrypted.path, "--passphrase-env", "TOOL_TEST_PASSPHRASE"], environment: environment)
            #expect([1, 2, 65].contains(damaged.status), "\(damaged.status) \(damaged.errors)")

            let listing = try Tool.run(["stores", directory.path, "--json"])
            #expect(listing.status == 0)
            #expect(listing.output.contains("Shop.sqlite") && listing.output.contains("Sealed.lmdb"))
        }
    }
}

extension StoreToolTests {
    /// Ctrl-C in the middle of a copy and of an import: exit 130, and nothing at the destination — no store, no
    /// partial file.
    @Test func anInterruptedCopyOrImportLeavesNothing() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Big", entities: [Tag.self])
            builder.directory = directory
            let db = try builder.create()
            try db.create((0..<150_000).map { Tag(id: String(format: "tag-%06d", $0), label: "label \($0)") })
            try db.close()
            let source = directory.appendingPathComponent("Big.sqlite")
            let dump = directory.appendingPathComponent("big.jsonl")
            #expect(try Tool.run(["export", source.path, "-o", dump.path]).status == 0)
            let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            for arguments in [
                ["copy", source.path, directory.appendingPathComponent("Copy.lmdb").path],
                ["import", dump.path, directory.appendingPathComponent("Imported.sqlite").path],
            ] {
                // Once the new store's partial file exists, the copy is under way (and Ctrl-C is caught).
                let result = try Tool.run(arguments) {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
                    return names.contains { $0.hasSuffix("-partial") }
                }
                #expect(result.status == 130, "\(arguments[0]): \(result.status) \(result.errors)")
                // The message names what was thrown away: the new store, not the source.
                #expect(result.errors.contains(arguments[2] + ": interrupted"), "\(result.errors)")
                #expect(!result.errors.contains(arguments[1]), "\(result.errors)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
            }
        }
    }
}

/// Runs the built `persistence` binary.
enum Tool {
    typealias Result = BuiltBinary.Result

    static func run(
        _ arguments: [String], environment: [String: String] = [:], interruptWhen: (() -> Bool)? = nil
    ) throws -> Result {
        try BuiltBinary("persistence").run(arguments, environment: environment, interruptWhen: interruptWhen)
    }
}
