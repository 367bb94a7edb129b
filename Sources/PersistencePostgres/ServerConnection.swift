import Foundation
import Logging
import NIOCore
import NIOPosix
import PersistenceCore
import PostgresNIO

/// One connection to the server, used synchronously from a thread that is not an event-loop thread.
///
/// Every call blocks the calling thread on the connection's future (`wait()`), which NIO refuses on its own
/// event loops — the database's blocking API runs on callers' threads or on its runner's queues, never there.
final class ServerConnection: @unchecked Sendable {
    private let connection: PostgresConnection
    private let logger: Logger

    private init(connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Connects and logs in, with typed errors that never carry the password.
    static func open(_ builder: PostgresBuilder) throws -> ServerConnection {
        var configuration = PostgresConnection.Configuration(
            host: builder.host, port: builder.port, username: builder.username, password: builder.password,
            database: builder.database, tls: .disable)
        configuration.options.connectTimeout = .nanoseconds(
            Int64(builder.connectTimeout.components.seconds) * 1_000_000_000
                + builder.connectTimeout.components.attoseconds / 1_000_000_000)
        let logger = builder.logger ?? Logger(label: "persistence.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        do {
            let connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
            return ServerConnection(connection: connection, logger: logger)
        } catch {
            throw Self.translate(error, builder: builder)
        }
    }

    /// Closes the connection.
    func close() {
        try? connection.close().wait()
    }

    /// Runs one statement with bound values; returns its rows.
    func query(_ sql: String, _ values: [Value] = []) throws -> [[Value]] {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        let result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).wait()
        return try result.rows.map { row in try row.map { cell in try Value(cell) } }
    }

    /// A `PersistenceError` for a failure to connect: which of the typed reasons, without the password.
    static func translate(_ error: any Error, builder: PostgresBuilder) -> PersistenceError {
        let place = "\(builder.host):\(builder.port)"
        guard let error = error as? PSQLError else {
            return PersistenceError(
                .unreachable, "could not reach the PostgreSQL server at \(place)", underlyingError: error)
        }
        switch error.serverInfo?[.sqlState] {
        case "28P01", "28000":
            return PersistenceError(
                .invalidCredentials, "the server at \(place) refused the user '\(builder.username)' or its password")
        case "3D000":
            return PersistenceError(.databaseNotFound, "the server at \(place) has no database '\(builder.database)'")
        default:
            break
        }
        switch error.code {
        case .sslUnsupported, .failedToAddSSLHandler:
            return PersistenceError(.tlsFailure, "TLS could not be set up with the server at \(place)")
        case .connectionError, .serverClosedConnection, .uncleanShutdown:
            return PersistenceError(.unreachable, "could not reach the PostgreSQL server at \(place)")
        default:
            return PersistenceError(
                .backend, "the PostgreSQL server at \(place) refused the connection (\(error.code))",
                nativeMessage: error.serverInfo?[.message])
        }
    }
}

extension PostgresBindings {
    /// Binds a stored value: integers as int8, reals as float8, text as text, blobs as bytea, `null` as null.
    mutating func append(_ value: Value) {
        switch value {
        case .null: appendNull()
        case .integer(let integer): append(integer)
        case .real(let real): append(real)
        case .text(let text): append(text)
        case .blob(let data): append(ByteBuffer(bytes: data))
        }
    }
}

extension Value {
    /// A stored value from a result cell, by its PostgreSQL type.
    init(_ cell: PostgresCell) throws {
        guard cell.bytes != nil else {
            self = .null
            return
        }
        switch cell.dataType {
        case .int2, .int4, .int8: self = .integer(try cell.decode(Int64.self))
        case .float4, .float8: self = .real(try cell.decode(Double.self))
        case .bool: self = .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .bytea:
            var buffer = try cell.decode(ByteBuffer.self)
            self = .blob(Data(buffer.readBytes(length: buffer.readableBytes) ?? []))
        default: self = .text(try cell.decode(String.self))
        }
    }
}
