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
}
