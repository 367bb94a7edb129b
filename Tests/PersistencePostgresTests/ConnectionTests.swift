import Foundation
import PersistenceCore
import PersistenceTesting
import Testing

@testable import PersistencePostgres

/// The server the tests use: `PERSISTENCE_POSTGRES_URL` (make test-postgres starts one and sets it). Without it the
/// tests fail rather than skip, so a CI run without a server can't pass silently.
func serverURL() throws -> String {
    guard let url = ProcessInfo.processInfo.environment["PERSISTENCE_POSTGRES_URL"], !url.isEmpty else {
        throw PersistenceError(
            .invalidConfiguration, "PERSISTENCE_POSTGRES_URL is not set: run the tests through `make test-postgres`")
    }
    return url
}

struct Probe: Entity {
    var id: Int64
}

let probeModel = Model(entities: [Probe.self])

struct ConnectionTests {
    @Test func connectsAndRoundTripsEveryStorageClass() throws {
        let connection = try ServerConnection.open(PostgresBuilder(url: serverURL(), model: probeModel))
        defer { connection.close() }
        let values: [Value] = [
            .integer(Int64.min), .real(-0.5), .text("é ' ; DROP TABLE x; --"), .blob(Data([0, 1, 255])), .null,
        ]
        let rows = try connection.rows("SELECT $1::int8, $2::float8, $3::text, $4::bytea, $5::int8", values)
        #expect(rows == [values])
    }

    /// `BEGIN` goes out without a wait: the next wait reports its failure first, even when the statement after it
    /// worked (it ran outside any transaction), and a failure is reported once.
    @Test func aStatementSentWithoutWaitingHasItsFailureReportedByTheNextWait() async throws {
        try await offPool {
            let connection = try ServerConnection.open(try freshBuilder([Probe.self]))
            defer { connection.close() }
            connection.send("BEGIN ISOLATION LEVEL NO_SUCH_LEVEL")
            let failure = expectError(.invalidStatement) { try connection.rows("SELECT 1") }
            #expect(String(describing: failure).contains("NO_SUCH_LEVEL"), "\(String(describing: failure))")
            #expect(try connection.rows("SELECT 2") == [[.integer(2)]], "reported once")
            connection.send("BEGIN")
            try connection.settle()
            try connection.execute("ROLLBACK")
            try connection.settle()  // nothing left to wait for
        }
    }

    @Test func refusesAWrongPasswordWithoutSayingIt() throws {
        var builder = try PostgresBuilder(url: serverURL(), model: probeModel)
        builder.username = "secret_user"
        builder.password = "wrong horse"
        let error = expectError(.invalidCredentials) { try ServerConnection.open(builder) }
        #expect(error.map { !"\($0)".contains("wrong horse") } ?? false)
        builder.password = "correct horse"
        try ServerConnection.open(builder).close()
    }

    @Test func namesAMissingDatabase() throws {
        var builder = try PostgresBuilder(url: serverURL(), model: probeModel)
        builder.database = "no_such_database"
        expectError(.databaseNotFound) { try ServerConnection.open(builder) }
    }

    @Test func namesAnUnreachableServer() throws {
        var builder = try PostgresBuilder(url: serverURL(), model: probeModel)
        builder.port = 1
        builder.connectTimeout = .seconds(2)
        expectError(.unreachable) { try ServerConnection.open(builder) }
    }

    @Test(arguments: ["mysql://u@h/d", "postgres:///d", "postgres://h/d", "postgres://u@h/d?sslmode=sometimes"])
    func refusesBadURLs(_ url: String) {
        expectError(.invalidConfiguration) { try PostgresBuilder(url: url, model: probeModel) }
    }

    @Test func readsEverySettingFromAURL() throws {
        let builder = try PostgresBuilder(
            url: "postgres://ann:s3cret@db.example:6543/shop?sslmode=require", model: probeModel)
        #expect(builder.host == "db.example" && builder.port == 6543 && builder.username == "ann")
        #expect(builder.password == "s3cret" && builder.database == "shop" && builder.tls == .require)
        try builder.validate()
        var bad = builder
        bad.poolSize = 0
        expectError(.invalidConfiguration) { try bad.validate() }
    }
}
