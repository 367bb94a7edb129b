import Foundation
import GRDB
import RawSQLite

/// RS1's raw SQLite baseline: the C API on the table ours makes (`WITHOUT ROWID`, the UUID's 16 bytes as the key),
/// WAL and `synchronous = FULL` as ours, prepared statements, columns by index; the rename is one `UPDATE`.
final class RawSuiteSQLiteStore: SuiteUsersStore {
    private let connection: RawSQLiteConnection
    private let insertStatement: OpaquePointer
    private let selectStatement: OpaquePointer
    private let updateStatement: OpaquePointer
    private var users: [SuiteUserRow] = []

    init(directory: URL, indexed: Bool) throws {
        connection = try RawSQLiteConnection.durable(
            "raw.sqlite", in: directory,
            schema: """
                CREATE TABLE IF NOT EXISTS "User" ("id" BLOB NOT NULL PRIMARY KEY, "firstName" TEXT NOT NULL,
                    "surname" TEXT NOT NULL, "age" INTEGER NOT NULL) WITHOUT ROWID
                """)
        insertStatement = try connection.prepare(
            #"INSERT INTO "User" ("id", "firstName", "surname", "age") VALUES (?, ?, ?, ?)"#)
        selectStatement = try connection.prepare(
            #"SELECT "id", "firstName", "surname", "age" FROM "User" WHERE "firstName" = ? ORDER BY "age""#)
        updateStatement = try connection.prepare(#"UPDATE "User" SET "firstName" = ? WHERE "firstName" = ?"#)
    }

    func prepare(_ users: [SuiteUserRow]) { self.users = users }

    func insert() throws {
        let insert = insertStatement
        try connection.execute("BEGIN IMMEDIATE")
        for user in users {
            try connection.bind(user.id, at: 1, insert)
            try connection.bind(user.firstName, at: 2, insert)
            try connection.bind(user.surname, at: 3, insert)
            try connection.bind(Int64(user.age), at: 4, insert)
            _ = try connection.step(insert)
            sqlite3_reset(insert)
        }
        try connection.execute("COMMIT")
        users = []
    }

    func fetch(named name: String) throws -> [SuiteUserRow] {
        let select = selectStatement
        defer { sqlite3_reset(select) }
        try connection.execute("BEGIN DEFERRED")
        try connection.bind(name, at: 1, select)
        var users: [SuiteUserRow] = []
        while try connection.step(select) {
            users.append(
                SuiteUserRow(
                    id: RawSQLiteConnection.uuid(select, 0), firstName: RawSQLiteConnection.text(select, 1),
                    surname: RawSQLiteConnection.text(select, 2), age: Int(sqlite3_column_int64(select, 3))))
        }
        try connection.execute("COMMIT")
        return users
    }

    func addIndex(_ directory: URL) throws -> any SuiteUsersStore {
        try connection.execute(#"CREATE INDEX "User_firstName" ON "User" ("firstName")"#)
        return self
    }

    func rename(_ name: String, to newName: String) throws -> Int {
        let update = updateStatement
        defer { sqlite3_reset(update) }
        try connection.execute("BEGIN IMMEDIATE")
        try connection.bind(newName, at: 1, update)
        try connection.bind(name, at: 2, update)
        _ = try connection.step(update)
        let changed = Int(sqlite3_changes(connection.handle))
        try connection.execute("COMMIT")
        return changed
    }

    func deleteAll() throws -> Int {
        try connection.execute("BEGIN IMMEDIATE")
        try connection.execute(#"DELETE FROM "User""#)
        let deleted = Int(sqlite3_changes(connection.handle))
        try connection.execute("COMMIT")
        return deleted
    }

    func close() throws { connection.close() }
}

/// A GRDB record of RS1's user, convertible to the plain row.
protocol GRDBSuiteUser: FetchableRecord, PersistableRecord, Sendable {
    init(_ row: SuiteUserRow)
    var row: SuiteUserRow { get }
    var firstName: String { get set }
}

/// GRDB's `Codable` record of the suite's user.
struct GRDBSuiteUserCodable: Codable, GRDBSuiteUser {
    static let databaseTableName = "User"
    var id: UUID
    var firstName: String
    var surname: String
    var age: Int

    init(_ row: SuiteUserRow) {
        (id, firstName, surname, age) = (row.id, row.firstName, row.surname, row.age)
    }
    var row: SuiteUserRow { SuiteUserRow(id: id, firstName: firstName, surname: surname, age: age) }
}

/// GRDB's record written by hand: `init(row:)` by column index, `encode(to:)` by column name.
struct GRDBSuiteUserByHand: GRDBSuiteUser {
    static let databaseTableName = "User"
    var row: SuiteUserRow
    var firstName: String {
        get { row.firstName }
        set { row.firstName = newValue }
    }

    init(_ row: SuiteUserRow) { self.row = row }

    init(row: GRDB.Row) throws {
        self.row = SuiteUserRow(id: row[0], firstName: row[1], surname: row[2], age: row[3])
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = row.id
        container["firstName"] = row.firstName
        container["surname"] = row.surname
        container["age"] = row.age
    }
}

/// RS1 on GRDB 7 as its documentation shows: a `DatabasePool`, the query interface, the suite's steps (the rename
/// fetches the records, changes and updates each, as the suite does on Realm and SwiftData).
final class GRDBSuiteStore<Record: GRDBSuiteUser>: SuiteUsersStore {
    private let pool: DatabasePool
    private var records: [Record] = []

    init(directory: URL, indexed: Bool) throws {
        pool = try DatabasePool.durable(at: directory.appendingPathComponent("grdb.sqlite"))
        try pool.write { db in
            try db.create(table: "User", options: [.ifNotExists, .withoutRowID]) { table in
                table.primaryKey("id", .blob)
                table.column("firstName", .text).notNull()
                table.column("surname", .text).notNull()
                table.column("age", .integer).notNull()
            }
        }
    }

    func prepare(_ users: [SuiteUserRow]) { records = users.map(Record.init) }

    func insert() throws {
        try pool.write { db in
            for record in records { try record.insert(db) }
        }
        records = []
    }

    func fetch(named name: String) throws -> [SuiteUserRow] {
        try pool.read { db in
            try Record.filter(Column("firstName") == name).order(Column("age")).fetchAll(db).map(\.row)
        }
    }

    func addIndex(_ directory: URL) throws -> any SuiteUsersStore {
        try pool.write { db in try db.create(index: "User_firstName", on: "User", columns: ["firstName"]) }
        return self
    }

    func rename(_ name: String, to newName: String) throws -> Int {
        try pool.write { db in
            let users = try Record.filter(Column("firstName") == name).fetchAll(db)
            for var user in users {
                user.firstName = newName
                try user.update(db)
            }
            return users.count
        }
    }

    func deleteAll() throws -> Int { try pool.write { db in try Record.deleteAll(db) } }

    func close() throws { try pool.close() }
}
