public import Foundation
public import GRDB

/// GRDB's mirror of ``Person``: an idiomatic Codable record.
public struct GRDBPerson: Codable, FetchableRecord, PersistableRecord, PersonRecord {
    public static let databaseTableName = "Person"

    public var id: Int64
    public var name: String
    public var email: String
    public var age: Int
    public var score: Double
    public var bio: String

    public init(_ person: Person) {
        id = person.id
        name = person.name
        email = person.email
        age = person.age
        score = person.score
        bio = person.bio
    }

    public var person: Person {
        Person(id: id, name: name, email: email, age: age, score: score, bio: bio)
    }
}

/// GRDB 7, the library an app would pick instead, used idiomatically: a `DatabasePool` (WAL), Codable records,
/// the query interface.
public final class GRDBSubject: SQLiteSubject {
    public typealias Record = GRDBPerson
    public static let implementation = "grdb"

    private let pool: DatabasePool

    public init(directory: URL) throws {
        pool = try DatabasePool.durable(at: directory.appendingPathComponent("grdb.sqlite"))
        try pool.write { db in
            try db.create(table: GRDBPerson.databaseTableName, ifNotExists: true) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("email", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
                table.column("bio", .text).notNull()
            }
            try db.create(
                index: "index_Person_name", on: GRDBPerson.databaseTableName, columns: ["name"], ifNotExists: true)
        }
    }

    public func insert(_ records: [GRDBPerson]) throws {
        try pool.write { db in
            for record in records { try record.insert(db) }
        }
    }

    public func fetchAll() throws -> [GRDBPerson] {
        try pool.read { db in try GRDBPerson.fetchAll(db) }
    }

    public func lookup(ids: [Int64]) throws -> [GRDBPerson] {
        try pool.read { db in
            var records: [GRDBPerson] = []
            records.reserveCapacity(ids.count)
            for id in ids {
                if let record = try GRDBPerson.fetchOne(db, key: id) { records.append(record) }
            }
            return records
        }
    }

    public func lookup(names: [String]) throws -> [GRDBPerson] {
        try pool.read { db in
            var records: [GRDBPerson] = []
            for name in names { records += try GRDBPerson.filter(Column("name") == name).fetchAll(db) }
            return records
        }
    }

    public func update(_ records: [GRDBPerson]) throws {
        try pool.write { db in
            for record in records { try record.update(db) }
        }
    }

    public func delete(ids: [Int64]) throws -> Int {
        try pool.write { db in
            var deleted = 0
            for id in ids where try GRDBPerson.deleteOne(db, key: id) { deleted += 1 }
            return deleted
        }
    }

    public func insertEach(_ records: [GRDBPerson]) throws {
        for record in records {
            try pool.write { db in try record.insert(db) }
        }
    }

    public func removeAll() throws {
        try pool.write { db in _ = try GRDBPerson.deleteAll(db) }
    }
}

extension DatabasePool {
    /// A pool with the same durability as the other implementations, checked. A `DatabasePool` sets
    /// `synchronous = NORMAL` when it turns WAL on, after `Configuration.prepareDatabase` has run, so this sets FULL
    /// on the (one, long-lived) writer connection afterwards; readers never commit.
    static func durable(at url: URL) throws -> DatabasePool {
        let pool = try DatabasePool(path: url.path)
        let synchronous = try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        try SQLiteDurability.check(synchronous, GRDBSubject.implementation)
        return pool
    }
}
