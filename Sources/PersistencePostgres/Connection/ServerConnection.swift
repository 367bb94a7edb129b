import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PersistenceCore
@_spi(PersistenceBackend) import PersistenceEngine
import PostgresNIO
import Synchronization

/// One connection to the server, used synchronously from a thread that is not an event-loop thread.
///
/// Every call blocks the calling thread on the connection's future (`wait()`), which NIO refuses on its own
/// event loops — the database's blocking API runs on callers' threads or on its runner's queues, never there.
///
/// `@unchecked Sendable`: a connection is used by one transaction, so one thread, at a time (the database's writer
/// lock or reader pool hands it out); `PostgresConnection` itself is thread-safe.
final class ServerConnection: @unchecked Sendable {
    private let connection: PostgresConnection
    private let logger: Logger
    /// Where errors say the server is: `host:port`, never the password.
    let place: String

    private init(connection: PostgresConnection, logger: Logger, place: String) {
        self.connection = connection
        self.logger = logger
        self.place = place
    }

    /// Connects and logs in, with typed errors that never carry the password, then applies the builder's session
    /// settings.
    /// - Parameter origin: What this connection's commits say they come from in the store's commit notices (the
    ///   session setting `persistence.origin`, sent with the login: no round trip): the database's own id, so its
    ///   listener tells its own commits from other servers'. `nil` for connections of the tools.
    static func open(_ builder: PostgresBuilder, origin: String? = nil) throws -> ServerConnection {
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch builder.tls {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            throw PersistenceError(.tlsFailure, "TLS could not be set up on this machine", underlyingError: error)
        }
        var configuration = PostgresConnection.Configuration(
            host: builder.host, port: builder.port, username: builder.username, password: builder.password,
            database: builder.database, tls: tls)
        configuration.options.connectTimeout = .nanoseconds(builder.connectTimeout.nanoseconds)
        if let origin { configuration.options.additionalStartupParameters = [(CommitNotices.originSetting, origin)] }
        let logger = builder.logger ?? Logger(label: "persistence.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
                id: nextConnectionID.add(1, ordering: .relaxed).newValue, logger: logger
            ).wait()
        } catch {
            throw Self.translate(connectionError: error, builder: builder)
        }
        let opened = ServerConnection(connection: connection, logger: logger, place: builder.place)
        do {
            if let timeout = builder.statementTimeout {
                try opened.execute("SET statement_timeout = \(max(1, timeout.nanoseconds / 1_000_000))")
            }
        } catch {
            opened.close()
            throw error
        }
        return opened
    }

    /// The error for a connection the server or the network ended.
    private var dropped: PersistenceError {
        PersistenceError(.connectionLost, "the connection to the PostgreSQL server at \(place) dropped")
    }

    /// Whether the connection is closed (by `close()`, the server, or the network).
    var isClosed: Bool { connection.isClosed }

    /// Closes the connection.
    func close() {
        _ = try? awaitAnswer(connection.close())
    }

    /// Calls `closed` (on an event loop) once the connection is closed, by `close()`, the server or the network.
    func whenClosed(_ closed: @escaping @Sendable () -> Void) {
        connection.closeFuture.whenComplete { _ in closed() }
    }

    /// Listens on `channel`: `notified` is called on the connection's event loop with each notification's payload,
    /// in the order the server sent them. Returns once the server confirmed the `LISTEN`.
    func listen(_ channel: String, notified: @escaping @Sendable (String) -> Void) throws {
        connection.addListener(channel: channel) { _, notification in notified(notification.payload) }
        // postgres-nio sends `LISTEN` ahead of anything asked after it: once this answers, the server listens.
        try execute("SELECT 1")
    }

    /// Runs one statement with values bound to `$1…`, and returns its rows and command tag.
    ///
    /// - Parameter textAsBytes: Binds text as `bytea` (UTF-8), as the typed tables store it; raw SQL binds `text`.
    @discardableResult
    func run(_ sql: String, _ values: [Value] = [], textAsBytes: Bool = true) throws -> PostgresQueryResult {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value, textAsBytes: textAsBytes) }
        do {
            return try awaitAnswer(connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
        } catch {
            throw translate(statementError: error)
        }
    }

    /// Runs one statement with values bound to `$1…`, handing each row to `onRow` on the calling thread as the rows
    /// arrive: the connection's event loop only receives and queues them, so decoding here overlaps with receiving
    /// there. An error `onRow` throws stops the query (its remaining rows are dropped unread) and is rethrown once the
    /// server has answered, so the connection is ready for the next statement.
    func stream(_ sql: String, _ values: [Value], onRow: (PostgresRow) throws -> Void) throws {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value, textAsBytes: true) }
        let queue = RowQueue()
        connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) { row in
            try queue.push(row)
        }.whenComplete { outcome in queue.finish(outcome.map { _ in () }) }
        try settle()
        var batch: [PostgresRow] = []
        var failure: (any Error)?
        var closedWhileWaiting = false
        while true {
            switch queue.take(into: &batch, waiting: 0.2) {
            case .rows:
                for row in batch where failure == nil {
                    do {
                        try onRow(row)
                    } catch {
                        failure = error
                        queue.stop()
                    }
                }
                batch.removeAll(keepingCapacity: true)
            case .waiting:
                // As awaitAnswer: a query sent as the server ends the connection may never be answered.
                if connection.isClosed {
                    if closedWhileWaiting {
                        throw dropped
                    }
                    closedWhileWaiting = true
                }
            case .finished(let outcome):
                if let failure { throw failure }
                do {
                    try outcome.get()
                } catch {
                    throw translate(statementError: error)
                }
                return
            }
        }
    }

    /// Waits for `future`, then for a statement ``send(_:)`` sent earlier (answered already: the server answers in
    /// order); that statement's failure is thrown rather than this one's, which followed from it.
    private func awaitAnswer<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let outcome = Result { try wait(for: future) }
        try settle()
        return try outcome.get()
    }

    /// The statement ``send(_:)`` sent and nothing has waited for yet.
    private var unanswered: EventLoopFuture<PostgresQueryResult>?

    /// Sends a statement without parameters and returns without waiting for its answer: postgres-nio sends what is
    /// asked next only once the server answered it, and the next call that waits reports its failure. A transaction's
    /// `BEGIN`, which its first statement follows at once: one wait less per transaction.
    func send(_ sql: String) {
        unanswered = connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
    }

    /// Sends a statement without parameters as ``send(_:)`` does, once the one sent before it (if any) is answered:
    /// a savepoint's `SAVEPOINT`, which the savepoint's first statement follows at once.
    func sendAfterSettling(_ sql: String) throws {
        try settle()
        send(sql)
    }

    /// Waits for the statement ``send(_:)`` sent, if nothing has yet; throws its failure.
    func settle() throws {
        guard let pending = unanswered else { return }
        unanswered = nil
        do {
            _ = try wait(for: pending)
        } catch {
            throw translate(statementError: error)
        }
    }

    /// Blocks until the server's answer arrives — or the connection is found closed while it waits: postgres-nio
    /// can leave a query sent just as the server ends the connection (`pg_terminate_backend`, a restart) unanswered
    /// forever, and a user's write must fail with `connectionLost` then, not hang.
    private func wait<T: Sendable>(for future: EventLoopFuture<T>) throws -> T {
        let answered = DispatchSemaphore(value: 0)
        let result = Mutex<Result<T, any Error>?>(nil)
        future.whenComplete { outcome in
            result.withLock { $0 = outcome }
            answered.signal()
        }
        while answered.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
            if connection.isClosed, answered.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
                throw dropped
            }
        }
        guard let outcome = result.withLock({ $0 }) else {
            throw dropped
        }
        return try outcome.get()
    }

    /// The fixed statements prepared on this connection, by SQL text: parsed and planned once per connection.
    private var prepared: [String: PreparedQuery] = [:]

    /// Runs one of a table's fixed statements (text bound as `bytea`) through a statement prepared on this connection
    /// the first time it runs; returns its rows (a statement that changes rows says how many with `RETURNING 1`).
    func runPrepared(_ sql: String, _ values: [Value]) throws -> [PostgresRow] {
        try runPrepared(sql, data: values.map(PostgresData.init(typed:)))
    }

    /// Runs a statement prepared on this connection as ``runPrepared(_:_:)`` does, its parameters bound as given: for
    /// types `Value` has none of (the `real[]` of a vector's elements).
    @discardableResult
    func runPrepared(_ sql: String, data: [PostgresData]) throws -> [PostgresRow] {
        do {
            return try awaitAnswer(try prepare(sql).execute(data))
        } catch {
            throw translate(statementError: error)
        }
    }

    /// Runs one of a table's fixed statements as ``runPrepared(_:_:)`` does, inside a savepoint of its own, waiting
    /// once: `SAVEPOINT`, the statement and `RELEASE` are queued together and postgres-nio sends each from the event
    /// loop as the one before is answered, so the calling thread doesn't wake between them (three round trips, one
    /// wait). When the statement fails the `RELEASE` fails too (the transaction is then aborted up to the savepoint),
    /// so the savepoint stays for the caller's `ROLLBACK TO`.
    /// - Parameters:
    ///   - setting: The `SAVEPOINT` statement; `releasing`, its `RELEASE` (constants: nothing is built per statement).
    /// - Throws: the first of the three that failed, the savepoint's before the statement's before the release's.
    func runPreparedInSavepoint(
        _ sql: String, _ values: [Value], setting: String, releasing: String
    ) throws -> [PostgresRow] {
        do {
            let statement = try prepare(sql)
            let begun = connection.query(PostgresQuery(unsafeSQL: setting), logger: logger)
                .map { _ in [PostgresRow]() }
            let ran = statement.execute(values.map(PostgresData.init(typed:)))
            let released = connection.query(PostgresQuery(unsafeSQL: releasing), logger: logger)
                .map { _ in [PostgresRow]() }
            let outcomes = try awaitAnswer(
                EventLoopFuture.whenAllComplete([begun, ran, released], on: released.eventLoop))
            for case .failure(let error) in outcomes { throw error }
            return try outcomes[1].get()
        } catch {
            throw translate(statementError: error)
        }
    }

    /// The statement prepared on this connection for `sql`: prepared the first time.
    private func prepare(_ sql: String) throws -> PreparedQuery {
        if let cached = prepared[sql] { return cached }
        let statement = try awaitAnswer(connection.prepare(query: sql))
        prepared[sql] = statement
        return statement
    }

    /// Runs one statement with bound values; returns its rows' values by their PostgreSQL types.
    func rows(_ sql: String, _ values: [Value] = [], textAsBytes: Bool = false) throws -> [[Value]] {
        try run(sql, values, textAsBytes: textAsBytes).rows.map { try $0.values() }
    }

    /// Runs statements without parameters (transaction control, DDL).
    func execute(_ sql: String) throws {
        try run(sql)
    }

    /// The number of rows the statement changed, from its command tag.
    static func changes(_ result: PostgresQueryResult) -> Int { result.metadata.rows ?? 0 }

    // MARK: - Errors

    /// A `PersistenceError` for a failure to connect: which of the typed reasons, without the password.
    static func translate(connectionError error: any Error, builder: PostgresBuilder) -> PersistenceError {
        let place = builder.place
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
        case "53300", "57P03":
            return PersistenceError(
                .busy, "the server at \(place) accepts no more connections now",
                nativeMessage: serverMessage(error))
        default:
            break
        }
        switch error.code {
        case .sslUnsupported, .failedToAddSSLHandler:
            return PersistenceError(.tlsFailure, "TLS could not be set up with the server at \(place)")
        case .connectionError, .serverClosedConnection, .uncleanShutdown:
            if String(describing: error.underlying ?? error).localizedCaseInsensitiveContains("ssl") {
                return PersistenceError(.tlsFailure, "TLS could not be set up with the server at \(place)")
            }
            return PersistenceError(.unreachable, "could not reach the PostgreSQL server at \(place)")
        default:
            return PersistenceError(
                .backend, "the PostgreSQL server at \(place) refused the connection (\(error.code))",
                nativeMessage: serverMessage(error))
        }
    }

    /// A `PersistenceError` for a failed statement, typed by its SQLSTATE. The server's primary message is kept (it
    /// names constraints and objects); its detail, which can quote stored values, never is.
    func translate(statementError error: any Error) -> PersistenceError {
        if let error = error as? PersistenceError { return error }
        // The statement API reports `PSQLError`; prepared statements (postgres-nio's older API) `PostgresError`.
        let state: String
        let message: String?
        let constraint: String?
        if let error = error as? PSQLError {
            guard let serverState = error.serverInfo?[.sqlState] else {
                switch error.code {
                case .serverClosedConnection, .uncleanShutdown, .connectionError, .clientClosedConnection:
                    return dropped
                default:
                    return PersistenceError(
                        .backend, "the PostgreSQL call failed (\(error.code))", nativeMessage: Self.serverMessage(error)
                    )
                }
            }
            state = serverState
            message = Self.serverMessage(error)
            constraint = error.serverInfo?[.constraintName]
        } else if let error = error as? PostgresError {
            switch error {
            case .server(let info):
                guard let serverState = info.fields[.sqlState] else { return dropped }
                state = serverState
                message = info.fields[.message]
                constraint = info.fields[.constraintName]
            case .connectionClosed:
                return dropped
            case .protocol(let text):
                return PersistenceError(.backend, "the PostgreSQL call failed", nativeMessage: text)
            }
        } else {
            return PersistenceError(.backend, "the PostgreSQL call failed", underlyingError: error)
        }
        let code: PersistenceError.Code
        let text: String
        switch state {
        case "40001", "40P01":
            code = .conflict
            text = "the write collided with a concurrent one and was rolled back; nothing of it was committed"
        case "23505":
            code = .uniqueViolation
            text = "a unique constraint refused the value"
        case "23502", "23514", "23503":
            code = .constraintViolation
            text = "a constraint refused the change"
        case "25006":
            code = .readOnly
            text = "a read transaction can't change the database"
        case "53100":
            code = .storageFull
            text = "the server's disk is full"
        case "55P03", "57014":
            code = .busy
            text = state == "57014" ? "the statement ran past its timeout" : "a lock could not be taken"
        case "42501":
            code = .permissionDenied
            text = "the role may not do this"
        case "25P02":
            code = .backend
            text = "the transaction was rolled back by an earlier error"
        default:
            if state.hasPrefix("08") || state.hasPrefix("57P") {
                code = .connectionLost
                text = dropped.message
            } else if state.hasPrefix("42") {
                code = .invalidStatement
                text = "the server refused the statement"
            } else if state.hasPrefix("22") {
                code = .invalidValue
                text = "the server refused a value"
            } else {
                code = .backend
                text = "the PostgreSQL server reported an error"
            }
        }
        var translated = PersistenceError(code, text, nativeMessage: message.map { "\(state): \($0)" } ?? state)
        translated.underlyingError = ServerErrorInfo(sqlState: state, constraint: constraint)
        return translated
    }

    private static func serverMessage(_ error: PSQLError) -> String? { error.serverInfo?[.message] }
}

/// What the server said about a failed statement, kept under a translated error: the SQLSTATE and the constraint
/// it names (never the detail, which can quote values).
struct ServerErrorInfo: Error, Sendable {
    let sqlState: String
    let constraint: String?
}

extension PersistenceError {
    /// The server's SQLSTATE and constraint, when a statement failed on the server.
    var serverInfo: ServerErrorInfo? { underlyingError as? ServerErrorInfo }
}

/// Connection ids for postgres-nio's logs.
private let nextConnectionID = Atomic<Int>(0)

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    var nanoseconds: Int64 {
        let (seconds, overflow) = components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return .max }
        return seconds.addingReportingOverflow(components.attoseconds / 1_000_000_000).overflow
            ? .max : seconds + components.attoseconds / 1_000_000_000
    }
}

/// The rows of one streamed query, handed from the event loop that receives them to the thread that decodes them.
///
/// `@unchecked Sendable`: every stored property is read and written under `condition`'s lock.
private final class RowQueue: @unchecked Sendable {
    enum Taken {
        /// Rows were moved into the batch.
        case rows
        /// None arrived within the wait, and the query goes on.
        case waiting
        /// The query has ended and every row has been taken.
        case finished(Result<Void, any Error>)
    }

    /// Ends the query when the reader has stopped.
    private struct Stopped: Error {}

    private let condition = NSCondition()
    private var rows: [PostgresRow] = []
    private var outcome: Result<Void, any Error>?
    private var stopped = false

    /// Queues a row (event loop); throws, ending the query, once the reader has stopped.
    func push(_ row: PostgresRow) throws {
        condition.lock()
        defer { condition.unlock() }
        guard !stopped else { throw Stopped() }
        rows.append(row)
        // The reader only waits on an empty queue.
        if rows.count == 1 { condition.signal() }
    }

    /// Records how the query ended (event loop).
    func finish(_ outcome: Result<Void, any Error>) {
        condition.lock()
        defer { condition.unlock() }
        self.outcome = outcome
        condition.signal()
    }

    /// Drops queued rows and refuses the rest (reader).
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        stopped = true
        rows.removeAll()
    }

    /// Swaps the queued rows into `batch` (which must be empty), waiting up to `seconds` for one (reader).
    func take(into batch: inout [PostgresRow], waiting seconds: TimeInterval) -> Taken {
        condition.lock()
        defer { condition.unlock() }
        if rows.isEmpty && outcome == nil {
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
        if !rows.isEmpty {
            swap(&rows, &batch)
            return .rows
        }
        guard let outcome else { return .waiting }
        return .finished(outcome)
    }
}

extension ServerConnection: PooledConnection {}
