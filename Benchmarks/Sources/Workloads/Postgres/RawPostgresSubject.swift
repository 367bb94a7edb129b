import PostgresNIO

/// The floor: postgres-nio by hand on one connection — prepared statements with static SQL, run with
/// `execute(_:logger:)`, on a table of the same shape as ours' in schema ``PostgresServer/rawSchema``.
///
/// postgres-nio runs prepared statements only through its `async` API; each timed call waits for its whole
/// operation once (``blockingWait(_:)``), and the statements inside run one after another, as ours' do.
public final class RawPostgresSubject: PostgresSubject {
    public typealias Record = Person
    public static let implementation = "raw"

    private let connection: PostgresConnection

    public init(server: PostgresServer, fresh: Bool) throws {
        connection = try blockingWait { try await server.connect() }
        guard fresh else { return }
        try blockingWait { [connection] in
            for sql in RawPostgresStatements.schema { try await Self.run(sql, on: connection) }
        }
    }

    deinit {
        try? connection.close().wait()
    }

    public func insert(_ records: [Person]) throws {
        try blockingWait { [connection] in try await Self.insert(records, on: connection) }
    }

    /// Fills raw's table with every row of `table` (schema-qualified, of the same shape) in one statement; not timed.
    func copyRows(from table: String) throws {
        try blockingWait { [connection] in
            try await Self.run(
                """
                INSERT INTO \(PostgresServer.rawSchema)."Person" ("id", "name", "email", "age", "score", "bio")
                SELECT "id", "name", "email", "age", "score", "bio" FROM \(table)
                """, on: connection)
        }
    }

    public func fetchAll() throws -> [Person] {
        try blockingWait { [connection] in
            try await Self.transaction(on: connection, writing: false) {
                var people: [Person] = []
                let rows = try await connection.execute(
                    RawPostgresStatements.SelectAll(), logger: PostgresServer.logger)
                for try await person in rows { people.append(person) }
                return people
            }
        }
    }

    public func lookup(ids: [Int64]) throws -> [Person] {
        try blockingWait { [connection] in
            try await Self.transaction(on: connection, writing: false) {
                var people: [Person] = []
                people.reserveCapacity(ids.count)
                for id in ids {
                    let rows = try await connection.execute(
                        RawPostgresStatements.SelectByID(id: id), logger: PostgresServer.logger)
                    for try await person in rows { people.append(person) }
                }
                return people
            }
        }
    }

    public func lookup(names: [String]) throws -> [Person] {
        try blockingWait { [connection] in
            try await Self.transaction(on: connection, writing: false) {
                var people: [Person] = []
                for name in names {
                    let rows = try await connection.execute(
                        RawPostgresStatements.SelectByName(name: name), logger: PostgresServer.logger)
                    for try await person in rows { people.append(person) }
                }
                return people
            }
        }
    }

    public func update(_ records: [Person]) throws {
        try blockingWait { [connection] in
            try await Self.transaction(on: connection, writing: true) {
                for person in records {
                    try await Self.drain(
                        connection.execute(RawPostgresStatements.Update(person: person), logger: PostgresServer.logger))
                }
            }
        }
    }

    public func delete(ids: [Int64]) throws -> Int {
        try blockingWait { [connection] in
            try await Self.transaction(on: connection, writing: true) {
                var deleted = 0
                for id in ids {
                    let rows = try await connection.execute(
                        RawPostgresStatements.Delete(id: id), logger: PostgresServer.logger)
                    for try await _ in rows { deleted += 1 }
                }
                return deleted
            }
        }
    }

    /// Inserts `records` in one `SERIALIZABLE` transaction on `connection`, a prepared `INSERT` each.
    static func insert(_ records: some Sequence<Person>, on connection: PostgresConnection) async throws {
        try await transaction(on: connection, writing: true) {
            for person in records {
                try await drain(
                    connection.execute(RawPostgresStatements.Insert(person: person), logger: PostgresServer.logger))
            }
        }
    }

    /// P7: upserts each record in a `SERIALIZABLE` transaction of its own on `connection`, running a transaction
    /// the server rolled back for a serialization failure again, as ours' `write(retryingUpTo:)` does; returns how
    /// many transactions were run again.
    static func upsertEach(_ records: some Sequence<Person>, on connection: PostgresConnection) async throws -> Int {
        var retries = 0
        for person in records {
            while true {
                do {
                    try await transaction(on: connection, writing: true) {
                        try await drain(
                            connection.execute(
                                RawPostgresStatements.Upsert(person: person), logger: PostgresServer.logger))
                    }
                    break
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "40001" {
                    retries += 1
                }
            }
        }
        return retries
    }

    /// Reads a statement's result to its end. postgres-nio 1.33.2's `execute` overload that returns the command tag
    /// traps on a statement that returns no rows (`PSQLRowStream.commandTag`'s precondition: the stream was never
    /// consumed), so statements without rows go through the row sequence too.
    static func drain<Rows: AsyncSequence>(_ rows: Rows) async throws {
        for try await _ in rows {}
    }

    /// Runs one statement without parameters (DDL, transaction control), unprepared.
    static func run(_ sql: String, on connection: PostgresConnection) async throws {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: PostgresServer.logger)
        for try await _ in rows {}
    }

    /// `body` between `BEGIN` and `COMMIT` with ours' isolation levels, rolled back when it throws.
    static func transaction<R>(
        on connection: PostgresConnection, writing: Bool, _ body: () async throws -> R
    ) async throws -> R {
        try await run(
            writing ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            on: connection)
        do {
            let result = try await body()
            try await run("COMMIT", on: connection)
            return result
        } catch {
            try? await run("ROLLBACK", on: connection)
            throw error
        }
    }
}
