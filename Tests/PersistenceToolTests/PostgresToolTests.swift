import Foundation
import PersistenceCore
import PersistencePostgres
import PersistenceSQLite
import PersistenceTestProcesses
import PersistenceTesting
import Testing

/// The store tool with a PostgreSQL server (`make test` runs this suite with the Postgres tests, against the server
/// it starts): SQLite → encrypted LMDB → PostgreSQL → SQLite, the same content hash at every hop, and the app reads
/// the PostgreSQL copy with its own types.
@Suite(.serialized)
struct PostgresToolTests {
    /// The server's URL without its password (which goes to `PGPASSWORD`, never the command line), with `schema`.
    static func server(schema: String) throws -> (locator: String, environment: [String: String]) {
        guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"], !url.isEmpty,
            var components = URLComponents(string: url)
        else {
            throw PersistenceError(.invalidConfiguration, "PERSISTENCE_POSTGRES_URL is not set: run `make test`")
        }
        var environment: [String: String] = [:]
        if let password = components.password {
            environment["PGPASSWORD"] = password
            components.password = nil
        }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: schema)]
        return (components.string ?? url, environment)
    }

    @Test func roundTripsThroughPostgreSQLWithEqualHashes() throws {
        let schema = "tool_\(UInt32.random(in: 0...UInt32.max))"
        let (postgres, serverEnvironment) = try Self.server(schema: schema)
        defer {
            if let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"],
                var builder = try? PostgresBuilder(url: url, model: Model(entities: []))
            {
                builder.schema = schema
                _ = try? builder.deleteStore()
            }
        }
        try withTemporaryDirectory { directory in
            let sqlite = try StoreToolTests().appStore(in: directory)
            var environment = serverEnvironment
            environment["TOOL_TEST_PASSPHRASE"] = StoreToolTests.passphrase
            let hash = try Tool.run(["hash", sqlite.path]).output
            let sealed = directory.appendingPathComponent("Sealed.lmdb").path
            let toLMDB = try Tool.run(
                ["copy", sqlite.path, sealed, "--destination-passphrase-env", "TOOL_TEST_PASSPHRASE"],
                environment: environment)
            #expect(toLMDB.status == 0, "\(toLMDB.errors)")
            let toServer = try Tool.run(
                ["copy", sealed, postgres, "--passphrase-env", "TOOL_TEST_PASSPHRASE"], environment: environment)
            #expect(toServer.status == 0, "\(toServer.errors)")
            let serverHash = try Tool.run(["hash", postgres], environment: environment)
            #expect(serverHash.output == hash, "\(serverHash.errors)")
            let inspect = try Tool.run(["inspect", postgres, "--json"], environment: environment)
            #expect(inspect.status == 0 && inspect.output.contains("\"Gadget\""), "\(inspect.errors)")
            let verify = try Tool.run(["verify", postgres], environment: environment)
            #expect(verify.status == 0, "\(verify.output) \(verify.errors)")
            let back = directory.appendingPathComponent("Back.sqlite").path
            let fromServer = try Tool.run(["copy", postgres, back], environment: environment)
            #expect(fromServer.status == 0, "\(fromServer.errors)")
            #expect(try Tool.run(["hash", back]).output == hash)
            // A second copy into the same schema is refused: a store is never overwritten.
            let again = try Tool.run(["copy", sqlite.path, postgres], environment: environment)
            #expect(again.status == 64, "\(again.errors)")

            // The app reads the server's copy with its own types.
            guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"] else { return }
            var builder = try PostgresBuilder(url: url, model: Model(entities: [Gadget.self, Tag.self]))
            builder.schema = schema
            let db = try builder.create()
            #expect(try db.recover(Gadget.self, sortedBy: [.ascending("id")]) == StoreToolTests.gadgets)
            try db.close()
            // A password in the URL is refused before anything is sent.
            let withPassword = try Tool.run(["inspect", "postgres://user:hunter2@127.0.0.1:1/db"])
            #expect(withPassword.status == 64 && !withPassword.errors.contains("hunter2"))
        }
    }
}
