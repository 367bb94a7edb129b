import Foundation
import PersistenceCommands
import PersistenceCore
import PersistencePostgres
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// The embedded commands on a PostgreSQL store (`make test` runs this suite with the Postgres tests, against the
/// server it starts): the rehearsal runs on the server and is rolled back, then the real migration, the check and the
/// export.
@Suite(.serialized)
struct PostgresCommandsTests {
    @Test func rehearsesByRollingBackThenMigratesVerifiesAndExports() throws {
        guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"], !url.isEmpty,
            var components = URLComponents(string: url)
        else {
            throw PersistenceError(.invalidConfiguration, "PERSISTENCE_POSTGRES_URL is not set: run `make test`")
        }
        let schema = "notes_\(UInt32.random(in: 0...UInt32.max))"
        defer {
            if var builder = try? PostgresBuilder(url: url, model: Model(entities: [])) {
                builder.schema = schema
                _ = try? builder.deleteStore()
            }
        }
        // The password goes to PGPASSWORD, never the command line.
        var environment: [String: String] = [:]
        if let password = components.password {
            environment["PGPASSWORD"] = password
            components.password = nil
        }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: schema)]
        let store = components.string ?? url
        let notes = EmbeddedCommandsTests.notes

        let seeded = try notes.run(["seed", "postgres", store, "--count", "120"], environment: environment)
        #expect(seeded.status == 0, "\(seeded.errors)")
        let rehearsal = try notes.run(["postgres", "migrate", store, "--dry-run", "--json"], environment: environment)
        #expect(rehearsal.status == 0, "\(rehearsal.errors)")
        let outcome = try JSONDecoder().decode(EmbeddedCommandsTests.Outcome.self, from: Data(rehearsal.output.utf8))
        #expect(outcome.mode == .rollback && outcome.needed && outcome.fromVersion == 1 && outcome.toVersion == 2)
        #expect(outcome.steps.first?.entities.first { $0.name == "Note" }?.recordsAfter == 120)
        // Rolled back: still version 1.
        #expect(try notes.run(["postgres", "verify", store], environment: environment).status == 78)

        let migrated = try notes.run(["postgres", "migrate", store], environment: environment)
        #expect(migrated.status == 0 && migrated.output.contains("Note 120 → 120 records"), "\(migrated.errors)")
        let verified = try notes.run(["postgres", "verify", store], environment: environment)
        #expect(verified.status == 0, "\(verified.output) \(verified.errors)")
        let exported = try notes.run(["postgres", "export", store, "--entity", "Note"], environment: environment)
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(exported.output.split(separator: "\n").count == 121)
        #expect(exported.output.contains(#""id":12,"title":"Note 12","body":"","words":0,"pinned":false"#))
        // A password in the URL is refused before anything is sent.
        let withPassword = try notes.run(["postgres", "verify", "postgres://user:hunter2@127.0.0.1:1/db"])
        #expect(withPassword.status == 64 && !withPassword.errors.contains("hunter2"))
    }
}
