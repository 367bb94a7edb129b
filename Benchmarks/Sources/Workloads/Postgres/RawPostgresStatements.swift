import PostgresNIO

/// The raw baseline's prepared statements: static SQL on `bench_raw."Person"` (``PostgresServer/rawSchema``), the
/// same statements ours sends, each prepared once per connection by postgres-nio on first use.
enum RawPostgresStatements {
    /// `bench_raw."Person"`, written by hand with the shape ours creates (`PostgresTable.creationSQL`).
    static let schema = [
        #"DROP SCHEMA IF EXISTS "bench_raw" CASCADE"#,
        #"CREATE SCHEMA "bench_raw""#,
        """
        CREATE TABLE "bench_raw"."Person" ("id" bigint NOT NULL PRIMARY KEY, "name" bytea NOT NULL, \
        "email" bytea NOT NULL, "age" bigint NOT NULL, "score" double precision NOT NULL, "bio" bytea NOT NULL)
        """,
        #"CREATE INDEX "index_Person_name" ON "bench_raw"."Person" ("name")"#,
    ]

    /// One record's columns in statement order, texts as their UTF-8 in `bytea`.
    static func bindings(_ person: Person) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(person.id)
        bindings.append(ByteBuffer(string: person.name))
        bindings.append(ByteBuffer(string: person.email))
        bindings.append(Int64(person.age))
        bindings.append(person.score)
        bindings.append(ByteBuffer(string: person.bio))
        return bindings
    }

    /// A `SELECT "id", "name", "email", "age", "score", "bio"` row, decoded.
    static func person(_ row: PostgresRow) throws -> Person {
        let (id, name, email, age, score, bio) = try row.decode(
            (Int64, ByteBuffer, ByteBuffer, Int64, Double, ByteBuffer).self)
        return Person(
            id: id, name: String(buffer: name), email: String(buffer: email), age: Int(age), score: score,
            bio: String(buffer: bio))
    }

    struct Insert: PostgresPreparedStatement {
        static let sql = """
            INSERT INTO "bench_raw"."Person" ("id", "name", "email", "age", "score", "bio") \
            VALUES ($1, $2, $3, $4, $5, $6)
            """
        typealias Row = ()
        let person: Person

        func makeBindings() -> PostgresBindings { RawPostgresStatements.bindings(person) }
        func decodeRow(_ row: PostgresRow) {}
    }

    /// P7's write: insert, or replace the record with that id.
    struct Upsert: PostgresPreparedStatement {
        static let sql = """
            INSERT INTO "bench_raw"."Person" ("id", "name", "email", "age", "score", "bio") \
            VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT ("id") DO UPDATE SET "name" = excluded."name", \
            "email" = excluded."email", "age" = excluded."age", "score" = excluded."score", "bio" = excluded."bio"
            """
        typealias Row = ()
        let person: Person

        func makeBindings() -> PostgresBindings { RawPostgresStatements.bindings(person) }
        func decodeRow(_ row: PostgresRow) {}
    }

    struct SelectAll: PostgresPreparedStatement {
        static let sql = """
            SELECT "id", "name", "email", "age", "score", "bio" FROM "bench_raw"."Person" ORDER BY "id"
            """
        typealias Row = Person

        func makeBindings() -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Person { try RawPostgresStatements.person(row) }
    }

    struct SelectByID: PostgresPreparedStatement {
        static let sql = """
            SELECT "id", "name", "email", "age", "score", "bio" FROM "bench_raw"."Person" WHERE "id" = $1
            """
        typealias Row = Person
        let id: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(id)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Person { try RawPostgresStatements.person(row) }
    }

    struct SelectByName: PostgresPreparedStatement {
        static let sql = """
            SELECT "id", "name", "email", "age", "score", "bio" FROM "bench_raw"."Person" WHERE "name" = $1 \
            ORDER BY "id"
            """
        typealias Row = Person
        let name: String

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(ByteBuffer(string: name))
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Person { try RawPostgresStatements.person(row) }
    }

    struct Update: PostgresPreparedStatement {
        static let sql = """
            UPDATE "bench_raw"."Person" SET "name" = $2, "email" = $3, "age" = $4, "score" = $5, "bio" = $6 \
            WHERE "id" = $1
            """
        typealias Row = ()
        let person: Person

        func makeBindings() -> PostgresBindings { RawPostgresStatements.bindings(person) }
        func decodeRow(_ row: PostgresRow) {}
    }

    /// Returns the deleted id: the count ours reads from the command tag, which postgres-nio's `execute` can't give
    /// here (see ``RawPostgresSubject/drain(_:)``).
    struct Delete: PostgresPreparedStatement {
        static let sql = #"DELETE FROM "bench_raw"."Person" WHERE "id" = $1 RETURNING "id""#
        typealias Row = Int64
        let id: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(id)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Int64 { try row.decode(Int64.self) }
    }
}
