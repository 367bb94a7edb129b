import Foundation
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// What the command line itself answers: help without a command, one line per error (usage errors too), the help
/// texts of the commands that make stores, the JSON of `inspect`.
@Suite(.serialized)
struct CommandLineTests {
    @Test func noCommandPrintsHelpAndRunsNoDemo() throws {
        let run = try Tool.run([])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("SUBCOMMANDS") && run.output.contains("demo"), "\(run.output)")
        #expect(!run.output.contains("Demo finished"))
    }

    @Test(arguments: [
        ["inspect"], ["inspect", "--nope", "Shop.sqlite"], ["inspect", "notes.txt"], ["nope"],
        ["copy", "a.sqlite"], ["export", "a.sqlite", "--format", "xml"], ["rekey", "a.lmdb", "--key-derivation", "x"],
    ])
    func aUsageErrorIsOneLineWithStatus64(_ arguments: [String]) throws {
        let run = try Tool.run(arguments)
        #expect(run.status == 64, "\(run.errors)")
        let lines = run.errors.split(separator: "\n")
        #expect(lines.count == 1, "\(run.errors)")
        #expect(lines.first?.hasPrefix("persistence: ") == true, "\(run.errors)")
        #expect(lines.first?.contains("--help") == true, "\(run.errors)")
        #expect(run.output.isEmpty)
    }

    @Test func theCommandsThatMakeStoresNamePostgreSQLDestinations() throws {
        for command in ["copy", "import"] {
            let help = try Tool.run([command, "--help"])
            #expect(help.status == 0)
            #expect(help.output.contains("postgres://"), "\(command): \(help.output)")
        }
    }

    @Test func inspectGivesSizesAsNumbers() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Shop", entities: [Tag.self])
            builder.directory = directory
            try builder.create().close()
            let run = try Tool.run(["inspect", directory.appendingPathComponent("Shop.sqlite").path, "--json"])
            #expect(run.status == 0, "\(run.errors)")
            let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            let details = report?["details"] as? [String: Any] ?? [:]
            let size = details["file size"] as? Int
            #expect(size == Int(StoredStoreSize.fileSize(directory.appendingPathComponent("Shop.sqlite"))))
            #expect((details["pages"] as? Int ?? 0) > 0 && details["page size"] as? Int == 4_096, "\(details)")
            #expect(details["free pages"] is Int, "\(details)")
            #expect(details["format"] is String)
            // The text is as before.
            let text = try Tool.run(["inspect", directory.appendingPathComponent("Shop.sqlite").path])
            #expect(text.output.contains(" bytes"), "\(text.output)")
        }
    }

    @Test func inspectShowsFullTextIndexesAndACopysFirstOpeningBuildsThem() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Stories", entities: [Story.self])
            builder.directory = directory
            let db = try builder.create()
            try db.create([
                Story(id: 1, title: "Actors", body: "an actor model"), Story(id: 2, title: "Other", body: "plain"),
            ])
            try db.close()
            let store = directory.appendingPathComponent("Stories.sqlite").path
            let text = try Tool.run(["inspect", store])
            #expect(text.status == 0, "\(text.errors)")
            #expect(
                text.output.contains("full-text index on title, body (words, stop words: the a of and)"),
                "\(text.output)")
            #expect(text.output.contains("full-text index on title (trigram)"), "\(text.output)")
            let json = try Tool.run(["inspect", store, "--json"])
            #expect(json.output.contains("\"fullTextIndexes\""), "\(json.output)")
            // A copy holds the records and the schema; its first opening builds the indexes.
            let copied = try Tool.run(["copy", store, directory.appendingPathComponent("Copy.sqlite").path])
            #expect(copied.status == 0, "\(copied.errors)")
            var copy = SQLiteBuilder(databaseName: "Copy", entities: [Story.self])
            copy.directory = directory
            let opened = try copy.create()
            defer { try? opened.close() }
            let found = try opened.recover(Story.self, query: Query(search: .matching("actor*", in: "title", "body")))
            #expect(found.map(\.id) == [1])
        }
    }

    @Test func inspectShowsVectorsAndExportImportCopyAndHashCarryThemBitForBit() throws {
        try withTemporaryDirectory { directory in
            var builder = SQLiteBuilder(databaseName: "Passages", entities: [Passage.self])
            builder.directory = directory
            let db = try builder.create()
            let awkward: [Float] = [-0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1 / 3, -2.5, 1e-30, 7, 0]
            let passages = [
                Passage(id: 1, lang: "en", embedding: Vector(awkward)), Passage(id: 2, lang: "fr", embedding: nil),
                Passage(id: 3, lang: "de", embedding: Vector((0..<8).map { Float($0) / 7 })),
            ]
            try db.create(passages)
            try db.close()
            let store = directory.appendingPathComponent("Passages.sqlite").path
            let text = try Tool.run(["inspect", store])
            #expect(text.status == 0, "\(text.errors)")
            #expect(text.output.contains("data? (vector of 8 dimensions)"), "\(text.output)")
            let json = try Tool.run(["inspect", store, "--json"])
            #expect(json.output.contains("\"vectorAttributes\""), "\(json.output)")
            // Exported, imported into LMDB, copied back to SQLite: the same hash, the same bits.
            let dump = directory.appendingPathComponent("dump.jsonl").path
            #expect(try Tool.run(["export", store, "--output", dump]).status == 0)
            let imported = directory.appendingPathComponent("Imported.lmdb").path
            let importing = try Tool.run(["import", dump, "lmdb:" + imported])
            #expect(importing.status == 0, "\(importing.errors)")
            let copied = directory.appendingPathComponent("Copy.sqlite").path
            #expect(try Tool.run(["copy", imported, copied]).status == 0)
            let hashes = try [store, imported, copied].map { try Tool.run(["hash", $0]).output }
            #expect(hashes[0] == hashes[1] && hashes[1] == hashes[2] && !hashes[0].isEmpty, "\(hashes)")
            var copy = SQLiteBuilder(databaseName: "Copy", entities: [Passage.self])
            copy.directory = directory
            let opened = try copy.create()
            defer { try? opened.close() }
            #expect(try opened.recover(Passage.self, sortedBy: [.ascending("id")]) == passages)
            let nearest = try opened.nearest(
                Passage.self, Query(nearest: .to(Vector(awkward), in: "embedding", by: .euclidean), limit: 1))
            #expect(nearest.map(\.record.id) == [1] && nearest.first?.distance == 0)
        }
    }
}
