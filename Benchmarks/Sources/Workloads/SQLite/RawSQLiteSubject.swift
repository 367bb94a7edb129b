public import Foundation
public import PersistenceCore
import RawSQLite

/// The floor: the SQLite C API on one connection, with the same schema and durability as the library's store.
public final class RawSQLiteSubject: SQLiteSubject {
    public typealias Record = Person
    public static let implementation = "raw"

    /// The library's schema for `Person`, written by hand.
    static let schema = """
        CREATE TABLE IF NOT EXISTS "Person" ("id" INTEGER NOT NULL PRIMARY KEY, "name" TEXT NOT NULL,
            "email" TEXT NOT NULL, "age" INTEGER NOT NULL, "score" REAL NOT NULL, "bio" TEXT NOT NULL);
        CREATE INDEX IF NOT EXISTS "index_Person_name" ON "Person" ("name");
        """
    static let columns = #""id", "name", "email", "age", "score", "bio""#

    private let connection: RawSQLiteConnection
    private lazy var insertStatement = prepare(#"INSERT INTO "Person" (\#(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)"#)
    private lazy var selectAllStatement = prepare(#"SELECT \#(Self.columns) FROM "Person" ORDER BY "id""#)
    private lazy var selectByIDStatement = prepare(#"SELECT \#(Self.columns) FROM "Person" WHERE "id" = ?"#)
    private lazy var selectByNameStatement = prepare(
        #"SELECT \#(Self.columns) FROM "Person" WHERE "name" = ? ORDER BY "id""#)
    private lazy var updateStatement = prepare(
        #"UPDATE "Person" SET "name" = ?, "email" = ?, "age" = ?, "score" = ?, "bio" = ? WHERE "id" = ?"#)
    private lazy var deleteStatement = prepare(#"DELETE FROM "Person" WHERE "id" = ?"#)
    private lazy var beginRead = prepare("BEGIN DEFERRED")
    private lazy var beginWrite = prepare("BEGIN IMMEDIATE")
    private lazy var commit = prepare("COMMIT")

    public init(directory: URL) throws {
        connection = try RawSQLiteConnection(path: directory.appendingPathComponent("raw.sqlite").path)
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = FULL")
        try connection.execute(Self.schema)
        try SQLiteDurability.check(connection.integer("PRAGMA synchronous"), Self.implementation)
    }

    /// Statements are prepared on first use; a failure there is a broken benchmark, not a measurement.
    private func prepare(_ sql: String) -> Result<OpaquePointer, any Error> {
        Result { try connection.prepare(sql) }
    }

    public func insert(_ records: [Person]) throws {
        try transaction(writing: true) {
            let statement = try insertStatement.get()
            for person in records { try insert(person, statement) }
        }
    }

    public func fetchAll() throws -> [Person] {
        try transaction(writing: false) {
            let statement = try selectAllStatement.get()
            defer { sqlite3_reset(statement) }
            var people: [Person] = []
            while try connection.step(statement) { people.append(Self.person(statement)) }
            return people
        }
    }

    public func lookup(ids: [Int64]) throws -> [Person] {
        try transaction(writing: false) {
            let statement = try selectByIDStatement.get()
            var people: [Person] = []
            people.reserveCapacity(ids.count)
            for id in ids {
                try connection.bind(id, at: 1, statement)
                if try connection.step(statement) { people.append(Self.person(statement)) }
                sqlite3_reset(statement)
            }
            return people
        }
    }

    public func lookup(names: [String]) throws -> [Person] {
        try transaction(writing: false) {
            let statement = try selectByNameStatement.get()
            var people: [Person] = []
            for name in names {
                try connection.bind(name, at: 1, statement)
                while try connection.step(statement) { people.append(Self.person(statement)) }
                sqlite3_reset(statement)
            }
            return people
        }
    }

    public func update(_ records: [Person]) throws {
        try transaction(writing: true) {
            let statement = try updateStatement.get()
            for person in records { try update(person, statement) }
        }
    }

    public func delete(ids: [Int64]) throws -> Int {
        try transaction(writing: true) {
            let statement = try deleteStatement.get()
            var deleted = 0
            for id in ids {
                try connection.bind(id, at: 1, statement)
                _ = try connection.step(statement)
                sqlite3_reset(statement)
                deleted += Int(sqlite3_changes(connection.handle))
            }
            return deleted
        }
    }

    public func insertEach(_ records: [Person]) throws {
        let statement = try insertStatement.get()
        for person in records {
            try transaction(writing: true) { try insert(person, statement) }
        }
    }

    public func removeAll() throws {
        try transaction(writing: true) { try connection.execute(#"DELETE FROM "Person""#) }
    }

    /// R1: makes the stored records equal to `incoming`, matched by id, in one transaction, as a careful C
    /// programmer would: the incoming records' positions in a dictionary keyed by id, one pass over every stored
    /// row (each decoded and compared with its incoming record, or noted for deletion), then a prepared `DELETE`
    /// per missing id, an `UPDATE` per changed record and an `INSERT` per new one — the order the library uses.
    /// - Throws: ``RawSQLiteError`` when an id appears twice in `incoming` (nothing changes) or SQLite fails.
    public func reconcile(with incoming: [Person]) throws -> ChangeCounts {
        try transaction(writing: true) {
            var positions: [Int64: Int] = [:]
            positions.reserveCapacity(incoming.count)
            for (index, person) in incoming.enumerated() where positions.updateValue(index, forKey: person.id) != nil {
                throw RawSQLiteError(
                    code: SQLITE_CONSTRAINT, message: "id \(person.id) appears twice", context: "reconcile")
            }
            var counts = ChangeCounts()
            var matched = [Bool](repeating: false, count: incoming.count)
            var changed: [Int] = []
            var missing: [Int64] = []
            let select = try selectAllStatement.get()
            do {
                defer { sqlite3_reset(select) }
                while try connection.step(select) {
                    let stored = Self.person(select)
                    guard let index = positions[stored.id] else {
                        missing.append(stored.id)
                        continue
                    }
                    matched[index] = true
                    if incoming[index] == stored {
                        counts.unchanged += 1
                    } else {
                        changed.append(index)
                    }
                }
            }
            let deleting = try deleteStatement.get()
            for id in missing {
                try connection.bind(id, at: 1, deleting)
                _ = try connection.step(deleting)
                sqlite3_reset(deleting)
                counts.deleted += Int(sqlite3_changes(connection.handle))
            }
            let updating = try updateStatement.get()
            for index in changed {
                try update(incoming[index], updating)
                counts.updated += Int(sqlite3_changes(connection.handle))
            }
            let inserting = try insertStatement.get()
            for index in incoming.indices where !matched[index] {
                try insert(incoming[index], inserting)
                counts.inserted += 1
            }
            return counts
        }
    }

    /// Streams every record through `body` without keeping them (the memory workload's reference).
    func forEach(_ body: (Person) -> Void) throws {
        try transaction(writing: false) {
            let statement = try selectAllStatement.get()
            defer { sqlite3_reset(statement) }
            while try connection.step(statement) { body(Self.person(statement)) }
        }
    }

    /// Inserts a stream of records in one transaction (fills the memory workload's store).
    func insert(streaming records: some Sequence<Person>) throws {
        try transaction(writing: true) {
            let statement = try insertStatement.get()
            for person in records { try insert(person, statement) }
        }
    }

    @inline(__always)
    private func insert(_ person: Person, _ statement: OpaquePointer) throws {
        try connection.bind(person.id, at: 1, statement)
        try connection.bind(person.name, at: 2, statement)
        try connection.bind(person.email, at: 3, statement)
        try connection.bind(Int64(person.age), at: 4, statement)
        try connection.bind(person.score, at: 5, statement)
        try connection.bind(person.bio, at: 6, statement)
        _ = try connection.step(statement)
        sqlite3_reset(statement)
    }

    @inline(__always)
    private func update(_ person: Person, _ statement: OpaquePointer) throws {
        try connection.bind(person.name, at: 1, statement)
        try connection.bind(person.email, at: 2, statement)
        try connection.bind(Int64(person.age), at: 3, statement)
        try connection.bind(person.score, at: 4, statement)
        try connection.bind(person.bio, at: 5, statement)
        try connection.bind(person.id, at: 6, statement)
        _ = try connection.step(statement)
        sqlite3_reset(statement)
    }

    @inline(__always)
    private static func person(_ statement: OpaquePointer) -> Person {
        Person(
            id: sqlite3_column_int64(statement, 0),
            name: RawSQLiteConnection.text(statement, 1),
            email: RawSQLiteConnection.text(statement, 2),
            age: Int(sqlite3_column_int64(statement, 3)),
            score: sqlite3_column_double(statement, 4),
            bio: RawSQLiteConnection.text(statement, 5))
    }

    /// Runs `body` between BEGIN and COMMIT; rolls back when it throws.
    private func transaction<R>(writing: Bool, _ body: () throws -> R) throws -> R {
        let begin = try (writing ? beginWrite : beginRead).get()
        _ = try connection.step(begin)
        sqlite3_reset(begin)
        let result: R
        do {
            result = try body()
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
        let commit = try commit.get()
        defer { sqlite3_reset(commit) }
        _ = try connection.step(commit)
        return result
    }
}
