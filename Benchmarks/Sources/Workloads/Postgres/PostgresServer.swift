import Foundation
import Logging
import PersistencePostgres
import PostgresNIO

/// The PostgreSQL server the P workloads run on: the one `PERSISTENCE_POSTGRES_URL` names
/// (`scripts/with-postgres.sh` starts a throw-away one and sets it).
///
/// Ours and raw reach it the same way: the settings ``PostgresBuilder`` parses from the URL, SwiftNIO's shared
/// event-loop group, no logging. Each keeps its table in a PostgreSQL schema of its own, dropped and created again
/// before every run.
public struct PostgresServer: Sendable {
    /// The environment variable that names the server.
    public static let environmentVariable = "PERSISTENCE_POSTGRES_URL"
    /// The schema of ours' store.
    public static let oursSchema = "bench_ours"
    /// The schema of raw's table (fixed: the prepared statements' SQL is static).
    public static let rawSchema = "bench_raw"

    public let url: String

    public init(url: String) {
        self.url = url
    }

    /// The server the environment names, or `nil` when `PERSISTENCE_POSTGRES_URL` is unset or empty.
    public static func fromEnvironment() -> PostgresServer? {
        guard let url = ProcessInfo.processInfo.environment[environmentVariable], !url.isEmpty else { return nil }
        return PostgresServer(url: url)
    }

    /// Ours' builder for a store of `Person` in ``oursSchema``.
    func builder(schema: String = PostgresServer.oursSchema) throws -> PostgresBuilder {
        var builder = try PostgresBuilder(url: url, model: Model(entities: [Person.self]))
        builder.schema = schema
        return builder
    }

    /// A new connection for the raw baseline, with the settings ours parses from the same URL.
    func connect() async throws -> PostgresConnection {
        let settings = try builder()
        let configuration = PostgresConnection.Configuration(
            host: settings.host, port: settings.port, username: settings.username, password: settings.password,
            database: settings.database, tls: try Self.tls(settings.tls))
        // The id only names the connection in postgres-nio's logs, which go nowhere.
        return try await PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 0, logger: Self.logger)
    }

    /// What postgres-nio logs to: nowhere, as for ours (a builder without a logger).
    static let logger = Logger(label: "bench.postgres.raw", factory: { _ in SwiftLogNoOpLogHandler() })

    private static func tls(_ mode: PostgresBuilder.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        switch mode {
        case .disable: .disable
        case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }
}
